package main

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestTrainUBM(t *testing.T) {
	// Two well separated clusters of unequal size in 8 dimensions.
	r := rand.New(rand.NewPCG(1, 2))
	const dim = 8
	centres := [2][dim]float64{}
	for c := range centres {
		for i := range centres[c] {
			centres[c][i] = 3 * r.NormFloat64()
		}
	}
	var data []float32
	for n := 0; n < 6000; n++ {
		c := 0
		if n%3 == 0 {
			c = 1
		}
		for i := 0; i < dim; i++ {
			data = append(data, float32(centres[c][i]+0.5*r.NormFloat64()))
		}
	}
	quiet := func(string, ...any) {}
	g := trainUBM(data, dim, 2, 8, 20, 0.001, quiet)
	for c, want := range []float64{2.0 / 3, 1.0 / 3} {
		best := -1
		for j := 0; j < g.k; j++ {
			var d float64
			for i := 0; i < dim; i++ {
				d += (g.mu[j*dim+i] - centres[c][i]) * (g.mu[j*dim+i] - centres[c][i])
			}
			if math.Sqrt(d) < 0.1 {
				best = j
			}
		}
		if best < 0 || math.Abs(g.w[best]-want) > 0.01 {
			t.Errorf("cluster %d: component %d, weights %.3f", c, best, g.w)
		}
		for i := 0; i < dim && best >= 0; i++ {
			if v := g.v[best*dim+i]; math.Abs(v-0.25) > 0.03 {
				t.Errorf("cluster %d: variance %.3f, want 0.25", c, v)
			}
		}
	}
	// Training is deterministic.
	h := trainUBM(data, dim, 8, 4, 10, 0.001, quiet)
	h2 := trainUBM(data, dim, 8, 4, 10, 0.001, quiet)
	for i := range h.mu {
		if h.mu[i] != h2.mu[i] || h.v[i] != h2.v[i] {
			t.Fatal("two trainings on the same data differ")
		}
	}
}

func TestNAPBasisFindsNuisance(t *testing.T) {
	// Vectors of 10 speakers: a speaker point plus a large random amount of
	// a planted nuisance direction and a little noise.
	r := rand.New(rand.NewPCG(3, 4))
	dim := 20
	nuis := make([]float64, dim)
	nuis[3], nuis[7] = 0.6, 0.8
	var vecs [][]float64
	var labels []string
	for s := 0; s < 10; s++ {
		spk := make([]float64, dim)
		for i := range spk {
			spk[i] = r.NormFloat64()
		}
		for u := 0; u < 8; u++ {
			a := 5 * r.NormFloat64()
			v := make([]float64, dim)
			for i := range v {
				v[i] = spk[i] + a*nuis[i] + 0.05*r.NormFloat64()
			}
			vecs = append(vecs, v)
			labels = append(labels, string(rune('a'+s)))
		}
	}
	b := napBasis(vecs, labels, 2)
	var dot float64
	for i := range nuis {
		dot += b[0][i] * nuis[i]
	}
	if math.Abs(dot) < 0.99 {
		t.Errorf("first direction · nuisance = %.3f, want ±1", dot)
	}
	for i := range b {
		for j := range b {
			var d float64
			for k := range b[i] {
				d += b[i][k] * b[j][k]
			}
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(d-want) > 1e-9 {
				t.Errorf("basis %d·%d = %v, want %v", i, j, d, want)
			}
		}
	}
}

func TestFitLogistic(t *testing.T) {
	// Scores drawn so that the true posterior is σ(2s): genuine ~ N(1, 1),
	// impostor ~ N(−1, 1) with equal priors gives log-odds 2s.
	r := rand.New(rand.NewPCG(5, 6))
	var gen, imp []float64
	for i := 0; i < 20000; i++ {
		gen = append(gen, 1+r.NormFloat64())
		imp = append(imp, -1+r.NormFloat64())
	}
	a, b := fitLogistic(gen, imp)
	if math.Abs(a-2) > 0.1 || math.Abs(b) > 0.1 {
		t.Errorf("fit σ(%.3f·s%+.3f), want σ(2s)", a, b)
	}
}

func TestSeparate(t *testing.T) {
	cases := []struct {
		name    string
		hi, lo  []float64
		lowest  float64
		highest float64
	}{
		{"gap", []float64{0.8, 0.9}, []float64{0.1, 0.2}, 0.2, 0.8},
		{"overlap", []float64{0.3, 0.8, 0.9}, []float64{0.1, 0.2, 0.4}, 0.2, 0.8},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := separate(tc.hi, tc.lo); got <= tc.lowest || got >= tc.highest {
				t.Errorf("separate = %v, want in (%v, %v)", got, tc.lowest, tc.highest)
			}
		})
	}
}

func TestFitLogisticN(t *testing.T) {
	// Genuine ~ N((1, 0), I), other ~ N((−1, 2), I): the log-odds are
	// 2·x0 − 2·x1 + 2 with equal priors.
	r := rand.New(rand.NewPCG(7, 8))
	var gen, other [][]float64
	for i := 0; i < 20000; i++ {
		gen = append(gen, []float64{1 + r.NormFloat64(), r.NormFloat64()})
		other = append(other, []float64{-1 + r.NormFloat64(), 2 + r.NormFloat64()})
	}
	// Two sources of the same distribution, one with a tenth of the
	// samples: weighted equally, the fit is the same.
	src := func(n int) []string {
		s := make([]string, n)
		for i := range s {
			if i%10 != 0 {
				s[i] = "synthetic"
			} else {
				s[i] = "real"
			}
		}
		return s
	}
	w, b := fitLogisticN(gen, other, sourceWeights(src(len(gen))), sourceWeights(src(len(other))))
	if math.Abs(w[0]-2) > 0.1 || math.Abs(w[1]+2) > 0.1 || math.Abs(b-2) > 0.15 {
		t.Errorf("fit σ(%.3f·x0 %+.3f·x1 %+.3f), want σ(2·x0 − 2·x1 + 2)", w[0], w[1], b)
	}
}

func TestSourceWeights(t *testing.T) {
	for _, tc := range []struct {
		src  []string
		want []float64
	}{
		{[]string{"a", "a"}, []float64{0.5, 0.5}},
		{[]string{"a", "b", "a", "a"}, []float64{1.0 / 6, 0.5, 1.0 / 6, 1.0 / 6}},
		{[]string{"", "real"}, []float64{0.5, 0.5}},
	} {
		got := sourceWeights(tc.src)
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("sourceWeights(%q) = %v, want %v", tc.src, got, tc.want)
				break
			}
		}
	}
}
