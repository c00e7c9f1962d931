package replay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/earshot-voice/earshot/audiohook"
	"github.com/earshot-voice/earshot/codec"
)

// sampleRate is the rate of every stream: AudioHook media are 8 kHz
// (spec section 7).
const sampleRate = 8000

// maxRecording bounds a file's length, so that a wrong argument (a
// multi-gigabyte file) fails instead of exhausting memory: four hours of
// 8 kHz audio per channel.
const maxRecording = 4 * 3600 * sampleRate

// silence is the µ-law code of a zero sample.
const silence = 0xFF

// Layout is how the audio of a call goes on the wire: which legs, in which
// order, as the server's opened media selected them (spec sections 5.2
// and 7).
type Layout uint8

// The layouts of the media the replay offers.
const (
	// LayoutNone: the server selected no media; no audio is sent.
	LayoutNone Layout = iota
	// LayoutExternal: mono, the external (caller) leg.
	LayoutExternal
	// LayoutInternal: mono, the internal (agent) leg.
	LayoutInternal
	// LayoutExternalInternal: stereo, external then internal, interleaved.
	LayoutExternalInternal
	// LayoutInternalExternal: stereo, internal then external.
	LayoutInternalExternal
	numLayouts
)

// Channels is the number of interleaved channels of the layout.
func (l Layout) Channels() int {
	switch l {
	case LayoutExternal, LayoutInternal:
		return 1
	case LayoutExternalInternal, LayoutInternalExternal:
		return 2
	}
	return 0
}

func (l Layout) String() string {
	switch l {
	case LayoutExternal:
		return "external"
	case LayoutInternal:
		return "internal"
	case LayoutExternalInternal:
		return "external+internal"
	case LayoutInternalExternal:
		return "internal+external"
	}
	return "none"
}

// Offers of the open message (Options.Offer).
const (
	// OfferGenesys is the media list Genesys Cloud and the reference
	// client send: stereo PCMU first, then the external leg, then the
	// internal leg (spec section 5.1). The server picks.
	OfferGenesys = "genesys"
	// OfferStereo offers stereo PCMU alone, so that every call streams
	// both legs: the worst case for a server, and what a server that
	// always takes stereo receives.
	OfferStereo = "stereo"
	// OfferMono offers the external leg alone.
	OfferMono = "mono"
)

var (
	mediaStereo   = audiohook.Media{Type: "audio", Format: "PCMU", Channels: []string{"external", "internal"}, Rate: sampleRate}
	mediaExternal = audiohook.Media{Type: "audio", Format: "PCMU", Channels: []string{"external"}, Rate: sampleRate}
	mediaInternal = audiohook.Media{Type: "audio", Format: "PCMU", Channels: []string{"internal"}, Rate: sampleRate}
)

// offer is the media list of every open for an Options.Offer.
func offer(kind string) []audiohook.Media {
	switch kind {
	case OfferStereo:
		return []audiohook.Media{mediaStereo}
	case OfferMono:
		return []audiohook.Media{mediaExternal}
	}
	return []audiohook.Media{mediaStereo, mediaExternal, mediaInternal}
}

// layoutOf maps the media an opened selected to a layout. It fails when
// the selection is more than one entry or not exactly one of the offered
// entries (the reference client answers both with error 400).
func layoutOf(selected, offered []audiohook.Media) (Layout, error) {
	switch len(selected) {
	case 0:
		return LayoutNone, nil
	case 1:
	default:
		return LayoutNone, errors.New("more than one media selected")
	}
	for _, o := range offered {
		if !selected[0].Equal(o) {
			continue
		}
		switch strings.Join(o.Channels, ",") {
		case "external":
			return LayoutExternal, nil
		case "internal":
			return LayoutInternal, nil
		case "external,internal":
			return LayoutExternalInternal, nil
		}
	}
	if m := selected[0]; m.Type == "audio" && m.Format == "PCMU" && m.Rate == sampleRate &&
		len(m.Channels) == 2 && m.Channels[0] == "internal" && m.Channels[1] == "external" {
		// Not offered, but a server may reorder; the reference client
		// refuses it, and so does the replay.
		return LayoutNone, errors.New("selected media not one of the offered (channel order)")
	}
	return LayoutNone, errors.New("selected media not one of the offered")
}

// Recording is one audio file, decoded and encoded once as 8 kHz G.711
// µ-law, and shared read-only by every call that plays it. The wire
// bytes of each layout are built the first time a call needs them.
type Recording struct {
	// Name is the file's path as given.
	Name string
	// Channels is the file's channel count: 1 (the external leg only)
	// or 2 (external on the first channel, internal on the second: the
	// left/right convention of telephony recorders and of the AudioHook
	// serializers that write stereo files).
	Channels int
	// Samples is the length in samples per channel.
	Samples int

	legs    [2][]byte // µ-law of the external and internal legs; internal is nil for a mono file
	once    [numLayouts]sync.Once
	payload [numLayouts][]byte
	built   atomic.Int64 // bytes of the payloads built beyond the legs
}

// Bytes is the memory the recording holds: its legs and the layouts built
// so far.
func (r *Recording) Bytes() int {
	return len(r.legs[0]) + len(r.legs[1]) + int(r.built.Load())
}

// Duration is the recording's length.
func (r *Recording) Duration() time.Duration {
	return time.Duration(r.Samples) * time.Second / sampleRate
}

// Payload returns the whole stream of the recording in layout l, frames
// not yet cut: one byte per sample per channel, channels interleaved in
// the layout's order. A mono file is the external leg; where the layout
// asks for the internal leg of a mono file, that leg is silence. The
// slice is shared: callers must not modify it.
func (r *Recording) Payload(l Layout) []byte {
	if l >= numLayouts {
		return nil
	}
	r.once[l].Do(func() {
		p := r.build(l)
		if len(p) > 0 && (len(r.legs[0]) == 0 || &p[0] != &r.legs[0][0]) && (len(r.legs[1]) == 0 || &p[0] != &r.legs[1][0]) {
			r.built.Add(int64(len(p)))
		}
		r.payload[l] = p
	})
	return r.payload[l]
}

func (r *Recording) build(l Layout) []byte {
	internal := r.legs[1]
	if internal == nil && l != LayoutNone && l != LayoutExternal {
		internal = bytes.Repeat([]byte{silence}, r.Samples)
	}
	switch l {
	case LayoutExternal:
		return r.legs[0]
	case LayoutInternal:
		return internal
	case LayoutExternalInternal:
		return interleave(r.legs[0], internal)
	case LayoutInternalExternal:
		return interleave(internal, r.legs[0])
	}
	return nil
}

func interleave(a, b []byte) []byte {
	out := make([]byte, 2*len(a))
	for i := range a {
		out[2*i] = a[i]
		out[2*i+1] = b[i]
	}
	return out
}

// framing cuts a payload into frames. Frames are sub-slices of the shared
// payload: cutting one allocates nothing.
type framing struct {
	payload    []byte
	frameBytes int // bytes of a whole frame; the last frame may be shorter
}

// newFraming frames payload (channels interleaved) into frames of
// frameDuration, keeping at most limit samples per channel (limit ≤ 0:
// all of it).
func newFraming(payload []byte, channels int, frameDuration time.Duration, limit int) framing {
	if channels == 0 {
		return framing{}
	}
	if limit > 0 && limit*channels < len(payload) {
		payload = payload[:limit*channels]
	}
	perFrame := max(int(int64(frameDuration)*sampleRate/int64(time.Second)), 1)
	return framing{payload: payload, frameBytes: perFrame * channels}
}

// count is the number of frames.
func (f framing) count() int {
	if f.frameBytes == 0 {
		return 0
	}
	return (len(f.payload) + f.frameBytes - 1) / f.frameBytes
}

// frame returns frame k.
func (f framing) frame(k int) []byte {
	start := k * f.frameBytes
	return f.payload[start:min(start+f.frameBytes, len(f.payload))]
}

// LoadRecording reads an audio file: a WAV file (.wav, or any file that
// starts with a RIFF header) of 16-bit PCM, µ-law or A-law, 8 kHz or
// 16 kHz (decimated to 8 kHz), mono or stereo; or headerless 8 kHz µ-law
// (.ulaw, .ul, .mulaw, .raw) of rawChannels interleaved channels.
func LoadRecording(path string, rawChannels int) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var head [4]byte
	n, _ := io.ReadFull(f, head[:])
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	switch ext := strings.ToLower(filepath.Ext(path)); {
	case ext == ".wav" || string(head[:n]) == "RIFF":
		return ReadWAVRecording(path, f)
	case ext == ".ulaw" || ext == ".ul" || ext == ".mulaw" || ext == ".raw":
		return ReadRawRecording(path, f, rawChannels)
	}
	return nil, fmt.Errorf("%w: %s", ErrFileType, path)
}

// ReadWAVRecording reads a WAV stream (see LoadRecording) into a
// Recording named name.
func ReadWAVRecording(name string, r io.Reader) (*Recording, error) {
	wr, err := codec.NewWAVReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f := wr.Format()
	if f.Channels != 1 && f.Channels != 2 || f.SampleRate != 8000 && f.SampleRate != 16000 {
		return nil, fmt.Errorf("%w: %s: %d Hz, %d channels", ErrFileFormat, name, f.SampleRate, f.Channels)
	}
	rec := &Recording{Name: name, Channels: f.Channels}
	if f.Frames > 0 && f.Frames <= maxRecording*int64(f.SampleRate/sampleRate) {
		for ch := range f.Channels {
			rec.legs[ch] = make([]byte, 0, f.Frames/int64(f.SampleRate/sampleRate)+1)
		}
	}
	var (
		buf  = make([]int16, 4096)
		leg  []int16
		dec  [2]codec.Decimator
		half []int16
	)
	for {
		n, err := wr.Read(buf)
		for ch := range f.Channels {
			leg, _ = codec.AppendChannel(leg[:0], buf[:n], f.Channels, ch)
			if f.SampleRate == 16000 {
				half = dec[ch].Append(half[:0], leg)
				leg = append(leg[:0], half...)
			}
			rec.legs[ch] = codec.AppendMuLawEncode(rec.legs[ch], leg)
		}
		if len(rec.legs[0]) > maxRecording {
			return nil, fmt.Errorf("%w: %s is longer than %v", ErrFileFormat, name, time.Duration(maxRecording)*time.Second/sampleRate)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return rec.finish()
}

// ReadRawRecording reads headerless 8 kHz µ-law of channels (1 or 2)
// interleaved channels, the first one the external leg.
func ReadRawRecording(name string, r io.Reader, channels int) (*Recording, error) {
	if channels != 1 && channels != 2 {
		return nil, fmt.Errorf("%w: %s: raw files have 1 or 2 channels, not %d", ErrFileFormat, name, channels)
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(channels)*maxRecording+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > channels*maxRecording {
		return nil, fmt.Errorf("%w: %s is longer than %v", ErrFileFormat, name, time.Duration(maxRecording)*time.Second/sampleRate)
	}
	if len(data)%channels != 0 {
		return nil, fmt.Errorf("%w: %s: %d bytes is not a whole number of %d-channel samples", ErrFileFormat, name, len(data), channels)
	}
	rec := &Recording{Name: name, Channels: channels}
	if channels == 1 {
		rec.legs[0] = data
		return rec.finish()
	}
	for ch := range 2 {
		leg := make([]byte, len(data)/2)
		for i := range leg {
			leg[i] = data[2*i+ch]
		}
		rec.legs[ch] = leg
	}
	return rec.finish()
}

// finish checks the recording and trims its legs to their length.
func (r *Recording) finish() (*Recording, error) {
	r.Samples = len(r.legs[0])
	if r.Samples == 0 {
		return nil, fmt.Errorf("%w: %s", ErrEmptyFile, r.Name)
	}
	for ch, leg := range r.legs {
		if cap(leg) > len(leg)+len(leg)/16 {
			leg = bytes.Clone(leg) // give back what growing left over
		}
		if leg != nil {
			r.legs[ch] = leg[:r.Samples:r.Samples]
		}
	}
	return r, nil
}
