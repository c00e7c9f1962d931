package eval

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/earshot-voice/earshot/codec"
	"github.com/earshot-voice/earshot/features"
	"github.com/earshot-voice/earshot/pipeline"
)

// maxWAVSamples bounds what one WAV file may hold: an hour of 16 kHz
// stereo.
const maxWAVSamples = 3600 * 16000 * 2

// writeMillis is the audio per Write: 20 ms, an RTP packet's worth, fine
// enough to stop a collection close to its voice target.
const writeMillis = 20

// audio is one file's audio coded as a call would carry it.
type audio struct {
	enc      codec.Encoding
	rate     int
	channels int
	data     []byte
}

// loadAudio reads a headerless µ-law file (ulaw, with the given number of
// interleaved channels) or, when ulaw is empty, a WAV file, whose samples
// are handed to the pipeline as 16-bit little-endian PCM.
func loadAudio(dir, ulaw, wav string, channels int) (*audio, error) {
	if ulaw != "" {
		data, err := os.ReadFile(filepath.Join(dir, ulaw))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrAudio, err)
		}
		data = data[:len(data)/channels*channels]
		return &audio{enc: codec.MuLaw, rate: 8000, channels: channels, data: data}, nil
	}
	f, err := os.Open(filepath.Join(dir, wav))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrAudio, err)
	}
	defer f.Close()
	format, samples, err := codec.ReadWAV(bufio.NewReader(f), maxWAVSamples)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrAudio, wav, err)
	}
	if format.Channels != channels {
		return nil, fmt.Errorf("%w: %s has %d channels, want %d", ErrAudio, wav, format.Channels, channels)
	}
	return &audio{enc: codec.L16, rate: format.SampleRate, channels: channels,
		data: codec.AppendL16Encode(nil, samples)}, nil
}

func (a *audio) frameBytes() int { return a.enc.BytesPerSample() * a.channels }

// samples is the number of samples per channel.
func (a *audio) samples() int { return len(a.data) / a.frameBytes() }

// hops is the number of whole 10 ms hops the pipeline analyses.
func (a *audio) hops() int { return a.samples() / (a.rate / 100) }

// cut returns the audio from start to end seconds, clamped to the file.
func (a *audio) cut(start, end float64) []byte {
	at := func(t float64) int {
		n := int(math.Round(t * float64(a.rate)))
		return min(max(n, 0), a.samples()) * a.frameBytes()
	}
	return a.data[at(start):at(end)]
}

// pipelineOptions are the options of a pipeline for a's format analysing
// channel voice with ref as the echo reference (−1 for none).
func (a *audio) pipelineOptions(voice, ref int, feat features.Options) pipeline.Options {
	return pipeline.Options{Encoding: a.enc, SampleRate: a.rate, Channels: a.channels,
		Voice: voice, Reference: ref, Features: feat}
}

// stream writes audio to one pipeline and times it: the pipeline's work
// (decode, VAD, features) and the sink's (model accumulation) on this
// goroutine.
type stream struct {
	p       *pipeline.Pipeline
	a       *audio // format of the stream
	elapsed time.Duration
	cpu     time.Duration // thread CPU time, when cpuOK
	cpuOK   bool
	written int64 // bytes
}

func newStream(a *audio, voice, ref int, feat features.Options, sink pipeline.Sink) (*stream, error) {
	p, err := pipeline.New(a.pipelineOptions(voice, ref, feat))
	if err != nil {
		return nil, err
	}
	p.SetSink(sink)
	return &stream{p: p, a: a}, nil
}

// write feeds data in 20 ms frames until it ends or stop reports true
// (checked before every frame). data must be in the stream's format.
func (s *stream) write(data []byte, stop func() bool) error {
	frame := s.a.rate * writeMillis / 1000 * s.a.frameBytes()
	defer s.clock()()
	for len(data) > 0 {
		if stop != nil && stop() {
			return nil
		}
		n := min(frame, len(data))
		if err := s.p.Write(data[:n]); err != nil {
			return err
		}
		s.written += int64(n)
		data = data[n:]
	}
	return nil
}

// flush ends the stream.
func (s *stream) flush() {
	defer s.clock()()
	s.p.Flush()
}

// clock starts timing work and returns the function that adds its wall
// and thread CPU time to the stream's.
func (s *stream) clock() func() {
	start := time.Now()
	cpu0, ok0 := threadCPU()
	return func() {
		s.elapsed += time.Since(start)
		cpu1, ok1 := threadCPU()
		s.cpuOK = ok0 && ok1
		s.cpu += cpu1 - cpu0
	}
}

// seconds is the audio written so far.
func (s *stream) seconds() float64 {
	return float64(s.written/int64(s.a.frameBytes())) / float64(s.a.rate)
}
