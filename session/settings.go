package session

import (
	"slices"
	"strings"
	"time"
)

// AudioSettings declares the format of the audio a session receives
// (POST /v1/audio_settings).
type AudioSettings struct {
	ID           string
	TenantID     string
	Protocol     string
	Format       string
	Codec        string
	SampleFormat string
	SampleRate   int
	Channels     int
	// Channel names the leg of a stereo call that carries the voice to
	// collect: "external" (the customer) or "internal" (the agent).
	Channel   string
	CreatedAt time.Time
}

// Accepted values.
var (
	protocols = []string{"audiohook"}
	formats   = []string{"raw"}
	codecs    = []string{"mulaw", "alaw", "pcm16"}
	legs      = []string{"external", "internal"}
)

// Channel legs.
const (
	ChannelExternal = "external"
	ChannelInternal = "internal"
)

// validate checks s, filling in the default channel.
func (s *AudioSettings) validate() error {
	var v ValidationError
	oneOf(&v, "audio_protocol", s.Protocol, protocols)
	oneOf(&v, "audio_format", s.Format, formats)
	oneOf(&v, "audio_codec", s.Codec, codecs)
	switch s.Codec {
	case "mulaw", "alaw":
		if s.SampleFormat != "" {
			v.add("sample_format", "must be %q for audio_codec %q", "", s.Codec)
		}
		if s.SampleRate != 8000 {
			v.add("sample_rate", "must be 8000 for audio_codec %q", s.Codec)
		}
	case "pcm16":
		if s.SampleFormat != "s16le" {
			v.add("sample_format", "must be %q for audio_codec %q", "s16le", s.Codec)
		}
		if s.SampleRate != 8000 && s.SampleRate != 16000 {
			v.add("sample_rate", "must be one of 8000, 16000 for audio_codec %q", s.Codec)
		}
	}
	if s.Channels != 1 && s.Channels != 2 {
		v.add("channels", "must be one of 1, 2")
	}
	if s.Channel == "" {
		s.Channel = ChannelExternal
	}
	oneOf(&v, "channel", s.Channel, legs)
	return v.err()
}

func oneOf(v *ValidationError, field, value string, allowed []string) {
	if !slices.Contains(allowed, value) {
		v.add(field, "must be one of %s", quoteAll(allowed))
	}
}

func quoteAll(values []string) string {
	q := make([]string, len(values))
	for i, s := range values {
		q[i] = `"` + s + `"`
	}
	return strings.Join(q, ", ")
}
