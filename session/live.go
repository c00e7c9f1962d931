package session

import (
	"slices"
	"sync"
	"time"
)

// live is a session in PROCESSING_AUDIO that this process knows of: it
// waits for a stream (with its NoAudio timer) or is bound to one.
type live struct {
	id       string
	key      callKey
	sess     Session // as created; state and results live elsewhere
	settings AudioSettings

	// Guarded by Manager.mu.
	timer        *time.Timer
	call         *Call
	finishing    bool // a terminal state is being written
	claimPending bool // bound to call, but the store could not take the claim yet

	mu       sync.Mutex
	progress *Progress
	dirty    bool // progress not yet in the store
}

func (l *live) setProgress(p Progress) {
	l.mu.Lock()
	if l.progress == nil {
		l.progress = new(Progress)
	}
	*l.progress = p
	l.dirty = true
	l.mu.Unlock()
}

// snapshot returns the progress and whether it is newer than the store's.
func (l *live) snapshot() (*Progress, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.progress == nil {
		return nil, false
	}
	p := *l.progress
	return &p, l.dirty
}

func (l *live) markClean(p Progress) {
	l.mu.Lock()
	if l.progress != nil && *l.progress == p {
		l.dirty = false
	}
	l.mu.Unlock()
}

// mediaFits reports whether a stream's media can feed a session with
// these audio settings: same coding and rate, and the settings' leg among
// the stream's (both legs when the settings ask for two channels).
func mediaFits(a AudioSettings, spec StreamSpec) bool {
	if len(spec.Channels) == 0 || spec.Encoding.String() != a.Codec || spec.SampleRate != a.SampleRate {
		return false
	}
	if a.Channels == 2 && len(spec.Channels) != 2 {
		return false
	}
	return slices.Contains(spec.Channels, a.Channel)
}

// offerFormat is the AudioHook media format of a REST codec.
func offerFormat(codec string) string {
	switch codec {
	case "mulaw":
		return "PCMU"
	case "pcm16":
		return "L16"
	case "alaw":
		return "PCMA"
	}
	return ""
}

// selectMedia picks the offer that fits a, preferring the fewest channels
// (external mono preferred); -1 when none fits.
func selectMedia(a AudioSettings, offered []MediaOffer) int {
	best := -1
	for i, o := range offered {
		if o.Format != offerFormat(a.Codec) || o.Rate != a.SampleRate || !slices.Contains(o.Channels, a.Channel) ||
			(a.Channels == 2) != (len(o.Channels) == 2) {
			continue
		}
		if best < 0 || len(o.Channels) < len(offered[best].Channels) {
			best = i
		}
	}
	return best
}

// defaultSettings choose the media of a stream that opens before its
// session: µ-law 8 kHz, the external leg, mono preferred.
var defaultSettings = AudioSettings{Codec: "mulaw", SampleRate: 8000, Channels: 1, Channel: ChannelExternal}

// defaultMedia picks the offer for a stream with no session yet: mono
// external µ-law, else stereo µ-law with the external leg.
func defaultMedia(offered []MediaOffer) int {
	if i := selectMedia(defaultSettings, offered); i >= 0 {
		return i
	}
	stereo := defaultSettings
	stereo.Channels = 2
	return selectMedia(stereo, offered)
}
