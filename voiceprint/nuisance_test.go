package voiceprint

import (
	"math"
	"math/rand/v2"
	"testing"
)

// cosineDirect is the definition the consistency check's cosine
// implements: project both offset vectors, then take their cosine.
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

// TestNuisanceCosine checks the consistency check's cosine, computed from
// the statistics' nuisance sums, against projecting the offsets.
func TestNuisanceCosine(t *testing.T) {
	m := shipped(t).c
	g := m.g
	rng := rand.New(rand.NewPCG(7, 8))
	// random returns statistics of about frames frames whose means sit
	// spread standard deviations from the UBM's.
	random := func(frames, spread float64) *stats {
		s := newStats(g)
		for c := range g.k {
			n := float32(rng.Float64() * 2 * frames / float64(g.k))
			if c%9 == 0 {
				n = 0 // a component no frame reached
			}
			s.n[c] = n
			for i := c * g.d; i < (c+1)*g.d; i++ {
				s.f[i] = n * (g.mean[i] + float32(spread*rng.NormFloat64())*g.sd[i])
			}
		}
		return &s
	}
	// alongNuisance returns s with its offsets moved by w along the
	// first nuisance direction.
	alongNuisance := func(s *stats, w float32) *stats {
		o := newStats(g)
		o.addStats(s)
		for j, u := range m.nuisance[0] {
			c := j / g.d
			o.f[j] += w * u * g.sd[j] * (o.n[c] + g.relevance)
		}
		return &o
	}
	a := random(1000, 1)
	tests := []struct {
		name string
		a, b *stats
	}{
		{"independent", a, random(1000, 1)},
		{"same", a, a},
		{"same up to nuisance", a, alongNuisance(a, 30)},
		{"few frames and many", random(20, 0.5), random(5000, 2)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kd := g.k * g.d
			oa, ob := make([]float32, kd), make([]float32, kd)
			g.offsets(oa, tc.a)
			g.offsets(ob, tc.b)
			rank := len(m.nuisance)
			sa, sb := make([]float64, rank*g.k), make([]float64, rank*g.k)
			ua, ub := make([]float64, rank), make([]float64, rank)
			m.nuisanceSums(sa, tc.a)
			m.nuisanceSums(sb, tc.b)
			m.nuisanceCoefficients(ua, sa, tc.a)
			m.nuisanceCoefficients(ub, sb, tc.b)
			var norm float64
			for _, x := range oa {
				norm += float64(x) * float64(x)
			}
			for r, u := range m.nuisance {
				var want float64
				for j, x := range oa {
					want += float64(u[j]) * float64(x)
				}
				if math.Abs(ua[r]-want) > 1e-5*math.Sqrt(norm) {
					t.Errorf("coefficient %d = %.6f, the inner product is %.6f", r, ua[r], want)
				}
			}
			got, want := projectedCosine(oa, ob, ua, ub), cosineDirect(m, oa, ob)
			if math.Abs(got-want) > 1e-5 {
				t.Errorf("cosine %.7f, projecting first gives %.7f", got, want)
			}
		})
	}
	if got := projectedCosine(make([]float32, 4), []float32{1, 2, 3, 4}, nil, nil); got != 0 {
		t.Errorf("cosine with a zero vector = %v, want 0", got)
	}
}
