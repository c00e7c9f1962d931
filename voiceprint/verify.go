package voiceprint

import (
	"crypto/subtle"
	"math"
)

// Verifier scores a live collection of voice against a template. It is fed
// exactly like an Enroller (ObservePCM per hop, Add per voiced vector) and
// Result scores what was accumulated; Add and ObservePCM allocate nothing.
// Memory per live Verifier: an Enroller's plus 31 KB for the template, the
// summed statistics and a scoring buffer.
//
// Scoring: with the test's Baum-Welch statistics N_c, F_c over T frames
// and the template's whitened MAP offsets a_c (both projected away from
// the nuisance directions), the raw score is the expected log-likelihood
// ratio per frame of the adapted model against the UBM under the UBM's
// frame posteriors:
//
//	raw = Σ_c a_c·(F_c − N_c μ_c)/(σ_c T) − ½ Σ_c (N_c/T)|a_c|²
//
// and the score is the logistic calibration of raw fitted on training
// trials, 0 to 1.
//
// A Verifier is not safe for concurrent use: the call's goroutine owns it.
type Verifier struct {
	c    collector
	a    []float32
	aq   []float32 // |a_c|² per component
	work []float32
	sum  stats
}

// Result is the outcome of a verification.
type Result struct {
	// Score is the calibrated similarity, 0 to 1; compare it with a
	// threshold (the model's DefaultSimilarityThreshold by default).
	Score float64
	// Raw is the uncalibrated score (log-likelihood ratio per frame).
	Raw float64
	// Authenticity of the verification audio.
	Authenticity Authenticity
}

// NewVerifier returns a Verifier of template t against m. It returns
// ErrCredentialModel when t was made with another model.
func (m Model) NewVerifier(t *Template) (*Verifier, error) {
	if subtle.ConstantTimeCompare(t.model[:], m.c.hash[:]) != 1 || t.k != m.c.g.k || t.d != m.c.g.d {
		return nil, ErrCredentialModel
	}
	g := m.c.g
	v := &Verifier{a: make([]float32, g.k*g.d), aq: make([]float32, g.k), work: make([]float32, g.k*g.d), sum: newStats(g)}
	v.c.init(m.c)
	t.dequantize(v.a)
	for c := 0; c < g.k; c++ {
		var s float32
		for _, x := range v.a[c*g.d : (c+1)*g.d] {
			s += x * x
		}
		v.aq[c] = s
	}
	return v, nil
}

// Add accumulates one feature vector of a voiced frame; ErrDim when
// len(vec) is not the model's Dim, ErrNonFinite (vector skipped) when it
// holds a NaN or an infinity.
func (v *Verifier) Add(vec []float32) error {
	if len(vec) != v.c.m.g.d {
		return ErrDim
	}
	if !v.c.add(vec) {
		return ErrNonFinite
	}
	return nil
}

// AddVectors accumulates consecutive vectors; ErrDim (and nothing added)
// when len(vecs) is not a multiple of the model's Dim, ErrNonFinite when
// some held a NaN or an infinity (those skipped).
func (v *Verifier) AddVectors(vecs []float32) error {
	d := v.c.m.g.d
	if len(vecs)%d != 0 {
		return ErrDim
	}
	var err error
	for i := 0; i < len(vecs); i += d {
		if !v.c.add(vecs[i : i+d]) {
			err = ErrNonFinite
		}
	}
	return err
}

// ObservePCM accounts one hop of PCM and its voice decision.
func (v *Verifier) ObservePCM(hop []int16, voiced bool) {
	v.c.observePCM(hop, voiced)
}

// VoiceSeconds is the voice accumulated so far.
func (v *Verifier) VoiceSeconds() float64 {
	return float64(v.c.frames) / 100
}

// Reset forgets the accumulated audio, keeping the template.
func (v *Verifier) Reset() {
	v.c.reset()
}

// Raw returns the uncalibrated score of the audio so far (0 without
// voice). It allocates nothing.
func (v *Verifier) Raw() float64 {
	st := &v.sum
	v.c.total(st)
	if st.frames == 0 {
		return 0
	}
	m := v.c.m
	m.g.centred(v.work, st)
	m.project(v.work)
	var s float64
	for i, x := range v.work {
		s += float64(x * v.a[i])
	}
	inv := 1 / float64(st.frames)
	for c, q := range v.aq {
		s -= 0.5 * float64(st.n[c]) * inv * float64(q)
	}
	return s
}

// Result scores the audio accumulated so far and measures its
// authenticity. Call it once, at the end: the authenticity part
// allocates and takes a few milliseconds.
func (v *Verifier) Result() Result {
	raw := v.Raw()
	d := v.c.m.def
	r := Result{Raw: raw, Authenticity: v.c.authenticity()}
	if v.c.frames > 0 {
		r.Score = logistic(d.CalibScale*raw + d.CalibOffset)
	}
	if math.IsNaN(r.Score) {
		r.Score = 0
	}
	return r
}
