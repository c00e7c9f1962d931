package voiceprint

import (
	"math"
	"math/rand/v2"
	"testing"
)

// shipped returns the model built into the binary.
func shipped(t testing.TB) Model {
	t.Helper()
	ms := NewRegistry().Models()
	if len(ms) == 0 {
		t.Fatal("no built-in model")
	}
	return ms[0]
}

// speaker draws synthetic feature vectors from the model's UBM with every
// component mean moved by a speaker-specific offset of about shift
// standard deviations: a stand-in voice with a known identity.
type speaker struct {
	m      Model
	offset []float32
	rng    *rand.Rand
}

func newSpeaker(m Model, seed uint64, shift float64) *speaker {
	g := m.c.g
	r := rand.New(rand.NewPCG(seed, 1))
	off := make([]float32, g.k*g.d)
	for i := range off {
		off[i] = float32(shift * r.NormFloat64() / float64(g.isd[i]))
	}
	return &speaker{m: m, offset: off, rng: rand.New(rand.NewPCG(seed, 2))}
}

// vectors appends n vectors.
func (s *speaker) vectors(dst []float32, n int) []float32 {
	g := s.m.c.g
	for range n {
		c := s.rng.IntN(g.k)
		for i := 0; i < g.d; i++ {
			j := c*g.d + i
			sd := 1 / float64(g.isd[j])
			dst = append(dst, g.mean[j]+s.offset[j]+float32(sd*s.rng.NormFloat64()))
		}
	}
	return dst
}

// hops returns n hops of Gaussian noise of the given RMS.
func hops(seed uint64, n int, rms float64) []int16 {
	r := rand.New(rand.NewPCG(seed, 3))
	out := make([]int16, 80*n)
	for i := range out {
		out[i] = int16(math.Max(-32768, math.Min(32767, rms*r.NormFloat64())))
	}
	return out
}
