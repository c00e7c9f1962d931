// Package pipeline is the audio path of one call leg, the same for a live
// call, an uploaded recording and earshot eval: decode (G.711 or linear
// PCM, 8 or 16 kHz, mono or one leg of a stereo call) → decimate to 8 kHz →
// voice activity detection (with the other leg as echo reference) → MFCC
// features of the voiced hops → a Sink (the speaker model of a session).
// It allocates nothing per frame after the first, and it never blocks: the
// call's goroutine drives it.
package pipeline

import (
	"errors"
	"fmt"

	"github.com/earshot-voice/earshot/codec"
	"github.com/earshot-voice/earshot/features"
	"github.com/earshot-voice/earshot/vad"
)

// Rate is the sample rate the pipeline works at; 16 kHz input is
// decimated to it first.
const Rate = 8000

// HopSamples is one 10 ms hop at Rate: the unit of voice decisions.
const HopSamples = Rate / 100

// Sink receives what the pipeline finds in the voice channel: every hop of
// PCM with its voice decision, in order, and the feature vectors of the
// voiced hops. The speaker model of a session (an enroller or verifier)
// implements it. Sinks run on the call's goroutine and must not block.
type Sink interface {
	// Hop is called for every 10 ms of the voice channel, with the voice
	// decision, in stream order.
	Hop(pcm []int16, voiced bool)
	// Features is called with n voiced feature vectors, laid out flat.
	Features(vecs []float32, n int)
}

// Options describe the audio a Pipeline decodes.
type Options struct {
	Encoding   codec.Encoding
	SampleRate int // 8000 or 16000
	Channels   int // 1 or 2
	// Voice is the index of the channel to analyse; Reference, when not
	// negative, the index of the other leg, used to tell its echo from
	// voice.
	Voice, Reference int
	// Features configure the feature extractor (its SampleRate must be 0
	// or 8000); a speaker model's own options go here, or to SetFeatures.
	Features features.Options
	// VADOnly starts the pipeline without a feature extractor: until
	// SetFeatures it runs the VAD alone, and a sink receives hops but no
	// features. A live call without a session needs nothing more, and the
	// extractor is most of a pipeline's memory (about 75 KB with the
	// speaker model's options).
	VADOnly bool
}

// Pipeline turns raw frames of a call into voice decisions and speaker
// features: decode → (decimate) → VAD → MFCC → Sink. It is the same code
// the live service and earshot eval run. It is not safe for concurrent use;
// after the first frames it allocates nothing.
type Pipeline struct {
	opts     Options
	det      *vad.Detector
	ext      *features.Extractor
	featOpts features.Options
	sink     Sink

	dec, refDec codec.Decimator // 16 kHz input only

	// Decoded samples not yet cut into hops. At 8 kHz whole hops are
	// decoded straight into hopVoice and hopRef, so these hold only what
	// a frame leaves over (less than a hop): a call does not keep a
	// decoded frame (3.2 KB a leg) for its whole length. At 16 kHz they
	// hold the decimated frame.
	voice, ref       []int16
	wide             []int16 // 16 kHz staging
	hopVoice, hopRef [HopSamples]int16

	// delay holds the last det.Delay()+1 hops of the voice channel, so
	// that the VAD's delayed decision meets its hop.
	delay     [][HopSamples]int16
	delayHead int64 // hops pushed into the delay line

	vecs []float32

	hops, decided, voiced int64
	sinkFrom              int64 // first hop the sink receives
}

// ErrOptions reports options a Pipeline cannot honour.
var ErrOptions = errors.New("pipeline: unsupported audio")

// New returns a Pipeline for opts.
func New(opts Options) (*Pipeline, error) {
	if opts.Encoding.BytesPerSample() == 0 || (opts.SampleRate != 8000 && opts.SampleRate != 16000) ||
		opts.Channels < 1 || opts.Channels > 2 || opts.Voice < 0 || opts.Voice >= opts.Channels ||
		opts.Reference >= opts.Channels || opts.Reference == opts.Voice {
		return nil, fmt.Errorf("%w: %+v", ErrOptions, opts)
	}
	det, err := vad.New(vad.Options{SampleRate: Rate})
	if err != nil {
		return nil, err
	}
	p := &Pipeline{opts: opts, det: det, delay: make([][HopSamples]int16, det.Delay()+1)}
	if opts.VADOnly {
		return p, nil
	}
	if err := p.SetFeatures(opts.Features); err != nil {
		return nil, err
	}
	return p, nil
}

// Dim is the dimension of the feature vectors the sink receives, 0 while
// the pipeline has no feature extractor (Options.VADOnly).
func (p *Pipeline) Dim() int {
	if p.ext == nil {
		return 0
	}
	return p.ext.Dim()
}

// SetSink sends what the pipeline finds in the hops written from now on
// to s (nil stops it): a session bound to a running stream collects from
// the next frame.
func (p *Pipeline) SetSink(s Sink) { p.sink, p.sinkFrom = s, p.hops }

// SetFeatures makes the pipeline extract features with opts (a speaker
// model fixes them) from the next hop on. Nothing changes when opts are
// the current options.
func (p *Pipeline) SetFeatures(opts features.Options) error {
	if p.ext != nil && opts == p.featOpts {
		return nil
	}
	ext, err := features.New(opts)
	if err != nil {
		return err
	}
	if ext.HopSize() != HopSamples {
		return fmt.Errorf("%w: features at %d Hz", ErrOptions, opts.SampleRate)
	}
	p.ext, p.featOpts = ext, opts
	if need := 8 * ext.Dim(); cap(p.vecs) < need {
		p.vecs = make([]float32, 0, need)
	}
	return nil
}

// Write processes one frame: whole samples of every channel, interleaved.
func (p *Pipeline) Write(frame []byte) error {
	if p.opts.SampleRate == Rate {
		return p.write8k(frame)
	}
	var err error
	if p.wide, err = codec.AppendDecodeChannel(p.opts.Encoding, p.wide[:0], frame, p.opts.Channels, p.opts.Voice); err != nil {
		return err
	}
	p.voice = p.dec.Append(p.voice, p.wide)
	if p.opts.Reference >= 0 {
		if p.wide, err = codec.AppendDecodeChannel(p.opts.Encoding, p.wide[:0], frame, p.opts.Channels, p.opts.Reference); err != nil {
			return err
		}
		p.ref = p.refDec.Append(p.ref, p.wide)
	}
	n := 0
	for ; n+HopSamples <= len(p.voice); n += HopSamples {
		if err := p.hop(p.voice[n:n+HopSamples], p.refHop(n)); err != nil {
			return err
		}
	}
	p.voice = p.voice[:copy(p.voice, p.voice[n:])]
	if p.opts.Reference >= 0 {
		p.ref = p.ref[:copy(p.ref, p.ref[n:])]
	}
	return nil
}

// write8k processes an 8 kHz frame: it completes the hop the previous
// frame left over, decodes the whole hops that follow straight from the
// frame, one at a time, and carries the rest (less than a hop). A frame
// that is not whole samples of every channel is refused before any of it
// is analysed.
func (p *Pipeline) write8k(frame []byte) error {
	bps := p.opts.Channels * p.opts.Encoding.BytesPerSample()
	if len(frame)%bps != 0 {
		return fmt.Errorf("%w: %d bytes of %d-channel %v", codec.ErrPartialFrame, len(frame), p.opts.Channels, p.opts.Encoding)
	}
	if len(p.voice) > 0 {
		n := min(HopSamples-len(p.voice), len(frame)/bps) * bps
		if err := p.carry(frame[:n]); err != nil {
			return err
		}
		frame = frame[n:]
		if len(p.voice) < HopSamples {
			return nil
		}
		if err := p.hop(p.voice, p.refHop(0)); err != nil {
			return err
		}
		p.voice, p.ref = p.voice[:0], p.ref[:0]
	}
	step := HopSamples * bps
	for ; len(frame) >= step; frame = frame[step:] {
		v, err := codec.AppendDecodeChannel(p.opts.Encoding, p.hopVoice[:0], frame[:step], p.opts.Channels, p.opts.Voice)
		if err != nil {
			return err
		}
		var ref []int16
		if p.opts.Reference >= 0 {
			if ref, err = codec.AppendDecodeChannel(p.opts.Encoding, p.hopRef[:0], frame[:step], p.opts.Channels, p.opts.Reference); err != nil {
				return err
			}
		}
		if err := p.hop(v, ref); err != nil {
			return err
		}
	}
	return p.carry(frame)
}

// carry decodes b, less than a hop of 8 kHz frames, onto the samples
// carried over.
func (p *Pipeline) carry(b []byte) (err error) {
	if p.voice, err = codec.AppendDecodeChannel(p.opts.Encoding, p.voice, b, p.opts.Channels, p.opts.Voice); err != nil {
		return err
	}
	if p.opts.Reference >= 0 {
		p.ref, err = codec.AppendDecodeChannel(p.opts.Encoding, p.ref, b, p.opts.Channels, p.opts.Reference)
	}
	return err
}

func (p *Pipeline) refHop(n int) []int16 {
	if p.opts.Reference < 0 || n+HopSamples > len(p.ref) {
		return nil
	}
	return p.ref[n : n+HopSamples]
}

// hop runs one 10 ms hop through the VAD and, delayed by its look-ahead,
// through the features.
func (p *Pipeline) hop(pcm, ref []int16) error {
	slot := &p.delay[p.delayHead%int64(len(p.delay))]
	copy(slot[:], pcm)
	p.delayHead++
	p.hops++
	var voiced bool
	var err error
	if ref != nil {
		voiced, err = p.det.ProcessWithReference(pcm, ref)
	} else {
		voiced, err = p.det.Process(pcm)
	}
	if err != nil {
		return err
	}
	if p.hops <= int64(p.det.Delay()) {
		return nil // no decision yet
	}
	p.decide(voiced)
	return nil
}

// decide pairs the next undecided hop with its decision.
func (p *Pipeline) decide(voiced bool) {
	idx := p.decided
	p.decided++
	if voiced {
		p.voiced++
	}
	hop := p.delay[idx%int64(len(p.delay))][:]
	if p.sink == nil || idx < p.sinkFrom {
		if p.ext != nil {
			// Keep the extractor's framing and deltas continuous.
			p.vecs, _, _ = p.ext.Append(p.vecs[:0], hop, false)
		}
		return
	}
	p.sink.Hop(hop, voiced)
	if p.ext == nil {
		return
	}
	var n int
	p.vecs, n, _ = p.ext.Append(p.vecs[:0], hop, voiced)
	if n > 0 {
		p.sink.Features(p.vecs, n)
	}
}

// Flush ends the stream: the hops in the VAD's delay line are decided and
// the features held back for their deltas are emitted. A partial hop is
// dropped. The pipeline can take a new stream afterwards.
func (p *Pipeline) Flush() {
	var decisions [64]bool
	for _, v := range p.det.Flush(decisions[:0]) {
		p.decide(v)
	}
	if p.ext != nil {
		var n int
		p.vecs, n = p.ext.Flush(p.vecs[:0])
		if n > 0 && p.sink != nil {
			p.sink.Features(p.vecs, n)
		}
	}
	p.voice, p.ref = p.voice[:0], p.ref[:0]
}

// Hops returns the 10 ms hops analysed so far.
func (p *Pipeline) Hops() int64 { return p.hops }

// Decided and Voiced return the hops with a voice decision and the voiced
// ones among them.
func (p *Pipeline) Decided() int64 { return p.decided }

// Voiced returns the voiced hops among the decided ones.
func (p *Pipeline) Voiced() int64 { return p.voiced }
