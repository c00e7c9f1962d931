package voiceprint

import (
	"fmt"
	"math"
)

// Enroller accumulates a live collection of voice into a speaker template.
// The pipeline calls ObservePCM for every 10 ms hop of PCM (voiced or not)
// and Add for every feature vector the features.Extractor emits for the
// voiced frames; at the end, Template and Authenticity summarise it.
//
// Add and ObservePCM allocate nothing and cost a few microseconds per
// frame (see the benchmarks). Memory per live Enroller, for the shipped
// 64-component, 39-dimension model: 10.2 KB of statistics for the segment
// being filled, 12 × 5.2 KB for completed segments (binary16), 8 KB of
// fingerprints, 1.5 KB of energy histograms and 9.6 KB for the pitch
// (13 × 0.64 KB of histograms, 0.5 KB of pending estimates, 0.8 KB of
// buffers) — about 92 KB whatever the duration.
//
// An Enroller is not safe for concurrent use: the call's goroutine owns it.
type Enroller struct {
	c collector
}

// NewEnroller returns an Enroller for m. m must come from a Registry or
// ParseModel (the zero Model panics).
func (m Model) NewEnroller() *Enroller {
	e := &Enroller{}
	e.c.init(m.c)
	return e
}

// Add accumulates one feature vector of a voiced frame. It returns ErrDim
// when len(vec) is not the model's Dim, and ErrNonFinite (the vector is
// skipped) when it holds a NaN or an infinity.
func (e *Enroller) Add(vec []float32) error {
	if len(vec) != e.c.m.g.d {
		return ErrDim
	}
	if !e.c.add(vec) {
		return ErrNonFinite
	}
	return nil
}

// AddVectors accumulates consecutive vectors, as appended by
// features.Extractor.Append. It returns ErrDim when len(vecs) is not a
// multiple of the model's Dim, and then adds nothing, and ErrNonFinite
// when some vectors held a NaN or an infinity (those are skipped, the
// others added).
func (e *Enroller) AddVectors(vecs []float32) error {
	d := e.c.m.g.d
	if len(vecs)%d != 0 {
		return ErrDim
	}
	var err error
	for i := 0; i < len(vecs); i += d {
		if !e.c.add(vecs[i : i+d]) {
			err = ErrNonFinite
		}
	}
	return err
}

// ObservePCM accounts one hop of PCM and its voice decision, for the SNR
// and clipping measurements of Authenticity. Any hop length works; the
// pipeline passes its 10 ms hops.
func (e *Enroller) ObservePCM(hop []int16, voiced bool) {
	e.c.observePCM(hop, voiced)
}

// VoiceSeconds is the voice accumulated so far: 10 ms per vector.
func (e *Enroller) VoiceSeconds() float64 {
	return float64(e.c.frames) / 100
}

// Authenticity measures the collection so far. It allocates and takes a
// few milliseconds: call it once, at the end.
func (e *Enroller) Authenticity() Authenticity {
	return e.c.authenticity()
}

// Reset forgets everything accumulated, keeping the buffers.
func (e *Enroller) Reset() {
	e.c.reset()
}

// Template returns the speaker template of the collection. It returns
// ErrNotEnoughVoice when the collection holds less voice than the model's
// MinVoiceSeconds.
func (e *Enroller) Template() (*Template, error) {
	m := e.c.m
	if v := e.VoiceSeconds(); v < m.def.MinVoiceSeconds || e.c.frames == 0 {
		return nil, fmt.Errorf("%w: %.2f s, the model needs %.2f s", ErrNotEnoughVoice, v, m.def.MinVoiceSeconds)
	}
	g := m.g
	st := newStats(g)
	e.c.total(&st)
	a := make([]float32, g.k*g.d)
	g.offsets(a, &st)
	m.project(a)
	t := &Template{model: m.hash, frames: uint32(st.frames)}
	t.quantize(a, g.k, g.d)
	return t, nil
}

// Template is an enrolled speaker: the whitened, nuisance-projected MAP
// mean offsets of the model's components, quantised to int8 with one
// scale per component. It is what a credential seals.
type Template struct {
	model  [32]byte
	frames uint32
	k, d   int
	scales []float32
	q      []int8
}

// ModelHash is the hex hash of the model the template was made with.
func (t *Template) ModelHash() string {
	return fmt.Sprintf("%x", t.model[:])
}

// VoiceSeconds is the voice the template was enrolled from.
func (t *Template) VoiceSeconds() float64 {
	return float64(t.frames) / 100
}

func (t *Template) quantize(a []float32, k, d int) {
	t.k, t.d = k, d
	t.scales = make([]float32, k)
	t.q = make([]int8, k*d)
	for c := 0; c < k; c++ {
		var m float32
		for _, v := range a[c*d : (c+1)*d] {
			m = max(m, float32(math.Abs(float64(v))))
		}
		if m == 0 {
			continue
		}
		s := m / 127
		t.scales[c] = s
		for i, v := range a[c*d : (c+1)*d] {
			t.q[c*d+i] = int8(math.Round(float64(v / s)))
		}
	}
}

func (t *Template) dequantize(dst []float32) {
	for c := 0; c < t.k; c++ {
		s := t.scales[c]
		for i := c * t.d; i < (c+1)*t.d; i++ {
			dst[i] = float32(t.q[i]) * s
		}
	}
}

// Supervector appends to dst the whitened MAP mean offsets of the
// collection, ((F + rμ)/(N + r) − μ)/σ per component and dimension
// (Components·Dim values), before the nuisance projection. The training
// command estimates the nuisance directions from them.
func (e *Enroller) Supervector(dst []float32) []float32 {
	g := e.c.m.g
	st := newStats(g)
	e.c.total(&st)
	n := len(dst)
	dst = append(dst, make([]float32, g.k*g.d)...)
	g.offsets(dst[n:], &st)
	return dst
}
