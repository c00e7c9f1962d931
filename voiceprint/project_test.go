package voiceprint

import (
	"math"
	"math/rand/v2"
	"testing"
)

// cosineDirect is the definition projectedCosine implements: project both
// vectors, then take their cosine.
func cosineDirect(m *compiled, a, b []float32) float64 {
	pa, pb := append([]float32(nil), a...), append([]float32(nil), b...)
	m.project(pa)
	m.project(pb)
	var ab, aa, bb float64
	for i := range pa {
		ab += float64(pa[i]) * float64(pb[i])
		aa += float64(pa[i]) * float64(pa[i])
		bb += float64(pb[i]) * float64(pb[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

func TestProjectedCosine(t *testing.T) {
	m := shipped(t).c
	kd := m.g.k * m.g.d
	rng := rand.New(rand.NewPCG(7, 8))
	random := func(scale float64) []float32 {
		v := make([]float32, kd)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * scale)
		}
		return v
	}
	// along returns v plus w times the first nuisance direction.
	along := func(v []float32, w float32) []float32 {
		out := append([]float32(nil), v...)
		for i, u := range m.nuisance[0] {
			out[i] += w * u
		}
		return out
	}
	a, b := random(1), random(1)
	tests := []struct {
		name string
		a, b []float32
	}{
		{"independent", a, b},
		{"same", a, a},
		{"opposite", a, along(make([]float32, kd), 0)},
		{"same up to nuisance", a, along(a, 30)},
		{"scaled", random(0.01), random(100)},
		{"close", a, along(random(0.1), 0)},
	}
	tests[2].b = append([]float32(nil), a...)
	for i := range tests[2].b {
		tests[2].b[i] = -tests[2].b[i]
	}
	for i := range tests[5].b {
		tests[5].b[i] += a[i]
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, want := m.projectedCosine(tc.a, tc.b), cosineDirect(m, tc.a, tc.b)
			if math.Abs(got-want) > 1e-5 {
				t.Errorf("projectedCosine = %.7f, projecting first gives %.7f", got, want)
			}
		})
	}
	if got := m.projectedCosine(make([]float32, kd), a); got != 0 {
		t.Errorf("cosine with a zero vector = %v, want 0", got)
	}
}
