package vad

const (
	frame8k  = 80  // samples in 10 ms at 8 kHz
	frame16k = 160 // samples in 10 ms at 16 kHz
)

// Options configure a Detector. The zero value is valid: 8 kHz input.
type Options struct {
	// SampleRate of the input in Hz: 8000 or 16000. 0 means 8000. 16 kHz
	// input is low-pass filtered and decimated to 8 kHz before analysis:
	// the detector looks at the telephone band only, and both rates give
	// nearly the same decisions for the same audio (99.9 % of the frames
	// of the dev corpus, upsampled to 16 kHz, agree).
	SampleRate int
}

// Detector is a streaming voice activity detector for one channel. Feed it
// consecutive 10 ms frames with Process (or ProcessWithReference); each call
// returns the decision for the frame Delay() calls earlier, so a consumer
// that acts on voiced frames (feature extraction, say) keeps the last
// Delay() frames, or whatever it derived from them, in a ring and releases
// the oldest when its decision arrives. At the end of the stream, Flush
// returns the decisions still pending.
//
// A Detector is not safe for concurrent use; use one per channel. After New
// it allocates nothing.
type Detector struct {
	cfg  config
	rate int

	fe  frontEnd
	cl  classifier
	sm  smoother
	dec *decimator // 16 kHz input only

	// reference channel (echo suppression); hasRef once a stream has
	// given one
	hasRef bool
	ref    *reference

	x    [frame8k]float64
	p    [numBands]float64
	rp   [numBands]float64
	rx   [numBands]float64
	xx   [numBands]float64
	ech  [numBands]float64
	seen int // frames processed since the stream began

	frames int // frames decided
	voiced int // frames decided voiced
}

// New returns a Detector configured by opts. It fails with ErrSampleRate
// when opts.SampleRate is not 0, 8000 or 16000.
func New(opts Options) (*Detector, error) {
	return newWithConfig(opts, defaultConfig())
}

func newWithConfig(opts Options, c config) (*Detector, error) {
	rate := opts.SampleRate
	if rate == 0 {
		rate = 8000
	}
	if rate != 8000 && rate != 16000 {
		return nil, ErrSampleRate
	}
	d := &Detector{cfg: c, rate: rate}
	d.cl.init(&d.cfg)
	d.sm.c = &d.cfg
	if rate == 16000 {
		d.dec = newDecimator()
	}
	d.Reset()
	return d, nil
}

// reference is the state of the reference channel: made by the first
// frame given with a reference, so that a detector of a mono stream does
// not carry it (about 6 KB: a front end, a noise tracker and the echo
// estimator's history).
type reference struct {
	fe   frontEnd
	tr   tracker
	dec  *decimator // 16 kHz input only
	echo echoEstimator
}

func (d *Detector) newReference() *reference {
	r := &reference{}
	r.tr.init(&d.cfg)
	r.echo.c = &d.cfg
	if d.rate == 16000 {
		r.dec = newDecimator()
	}
	r.reset()
	return r
}

func (r *reference) reset() {
	r.fe.reset()
	r.tr.reset()
	r.echo.reset()
	if r.dec != nil {
		r.dec.reset()
	}
}

// Reset forgets the stream: noise estimates, echo path, pending decisions
// and the counters. The next frame starts a new stream.
func (d *Detector) Reset() {
	d.restart()
	d.frames, d.voiced = 0, 0
}

// restart forgets the stream but keeps the counters.
func (d *Detector) restart() {
	d.fe.reset()
	d.cl.reset()
	d.sm.reset()
	if d.ref != nil {
		d.ref.reset()
	}
	if d.dec != nil {
		d.dec.reset()
	}
	d.hasRef = false
	d.seen = 0
}

// SampleRate returns the input sample rate in Hz.
func (d *Detector) SampleRate() int { return d.rate }

// FrameSize returns the number of samples in one 10 ms frame: 80 at 8 kHz,
// 160 at 16 kHz.
func (d *Detector) FrameSize() int { return d.rate / 100 }

// Delay returns the fixed number of frames by which decisions lag the
// input: the value returned by the n-th call of Process (counting from 0)
// is the decision for frame n−Delay(). It is 40 frames (400 ms). The
// detector uses that look-ahead to extend speech backwards to its onset
// and to bridge short pauses inside an utterance without extending its end.
func (d *Detector) Delay() int { return d.cfg.delay }

// Frames returns the number of frames decided so far (processed frames
// minus the ones still pending in the delay line).
func (d *Detector) Frames() int { return d.frames }

// Voiced returns the number of decided frames that were voiced.
func (d *Detector) Voiced() int { return d.voiced }

// VoicedPercentage returns 100·Voiced()/Frames(), or 0 before the first
// decision.
func (d *Detector) VoicedPercentage() float64 {
	if d.frames == 0 {
		return 0
	}
	return 100 * float64(d.voiced) / float64(d.frames)
}

// Process analyses the next 10 ms frame of the channel and returns the
// decision for the frame Delay() frames earlier; the first Delay() calls
// decide no frame and return false. A frame of the wrong length returns
// ErrFrameSize and changes nothing.
func (d *Detector) Process(frame []int16) (bool, error) {
	if len(frame) != d.FrameSize() {
		return false, ErrFrameSize
	}
	d.load(frame, d.dec, &d.fe)
	d.fe.bands(&d.p)
	if d.hasRef {
		// The stream had a reference before: keep the echo model's time
		// line, with a silent reference for this frame.
		d.rx = [numBands]float64{}
		return d.emit(d.classifyWithEcho()), nil
	}
	return d.emit(d.cl.frame(&d.p, nil)), nil
}

// ProcessWithReference is Process for a channel that may carry an echo of
// another channel, given as ref: the same 10 ms of the other leg of the
// call (for the caller leg of a contact-centre call, the agent leg). The
// detector learns the echo delay (0 to 310 ms) and power coupling from the
// two streams as they go, and does not count as voice the part of the
// frame's power that the reference explains. Both frames must have
// FrameSize() samples, or it returns ErrFrameSize and changes nothing. Use
// it for every frame of a stream; frames given to Process in between are
// taken as having a silent reference.
func (d *Detector) ProcessWithReference(frame, ref []int16) (bool, error) {
	if len(frame) != d.FrameSize() || len(ref) != len(frame) {
		return false, ErrFrameSize
	}
	if d.ref == nil {
		d.ref = d.newReference()
	}
	r := d.ref
	d.load(ref, r.dec, &r.fe)
	// The echo model needs the reference's power envelope, not its
	// detail: analysing the reference every other frame (a 16 ms window
	// every 20 ms) and holding the result costs nothing measurable in F1
	// and a quarter of the time.
	if d.seen%2 == 0 || !d.hasRef {
		r.fe.bands(&d.rp)
		r.tr.track(&d.rp)
		r.tr.excess(&d.rp, &d.rx)
	}
	d.hasRef = true
	d.load(frame, d.dec, &d.fe)
	d.fe.bands(&d.p)
	return d.emit(d.classifyWithEcho()), nil
}

// classifyWithEcho updates the echo model with the reference excess in
// d.rx and classifies d.p against noise plus predicted echo.
func (d *Detector) classifyWithEcho() (voiced, weak bool) {
	if d.seen > 0 {
		// The channel's excess over its noise estimate of the previous
		// frame: the estimate of this frame depends on the echo.
		d.cl.tr.excess(&d.p, &d.xx)
	} else {
		d.xx = [numBands]float64{}
	}
	d.ref.echo.update(&d.rx, &d.xx, &d.ech)
	return d.cl.frame(&d.p, &d.ech)
}

// load converts frame to 8 kHz float samples in d.x and appends them to the
// front end's history.
func (d *Detector) load(frame []int16, dec *decimator, fe *frontEnd) {
	if d.rate == 16000 {
		dec.process(frame, &d.x)
	} else {
		frame = frame[:frame8k]
		for i, v := range frame {
			d.x[i] = float64(v)
		}
	}
	fe.push(&d.x)
}

func (d *Detector) emit(raw, weak bool) bool {
	d.seen++
	v, ok := d.sm.push(raw, weak)
	if !ok {
		return false
	}
	d.frames++
	if v {
		d.voiced++
	}
	return v
}

// Flush ends the stream: it appends to dst the decisions of the frames
// still in the delay line (min(Delay(), frames processed)), oldest first,
// counts them, and returns the extended slice. The detector then starts a
// new stream with the next frame, as after Reset, but Frames, Voiced and
// VoicedPercentage keep counting.
func (d *Detector) Flush(dst []bool) []bool {
	n := min(d.cfg.delay, d.seen)
	for i := d.seen - n; i < d.seen; i++ {
		v := d.sm.label(i)
		dst = append(dst, v)
		d.frames++
		if v {
			d.voiced++
		}
	}
	d.restart()
	return dst
}
