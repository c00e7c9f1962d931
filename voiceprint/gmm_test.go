package voiceprint

import (
	"math"
	"sort"
	"testing"
)

// TestEvalPruning checks that skipping the shortlisted components that
// cannot matter (pruneNats) changes no posterior of 10⁻⁵ or more and the
// frame log-likelihood by almost nothing, against a direct evaluation of
// the same shortlist: the best Shortlist components over the preselection
// dimensions, every one completed.
func TestEvalPruning(t *testing.T) {
	base := shipped(t)
	g := base.c.g
	for _, short := range []int{1, 5, 16} {
		for _, shift := range []float64{0.3, 1, 3} {
			gg := *g
			gg.short = short
			f := gg.newFrame()
			vecs := newSpeaker(base, uint64(10*short)+uint64(shift*10), shift).vectors(nil, 300)
			for i := 0; i+g.d <= len(vecs); i += g.d {
				x := vecs[i : i+g.d]
				gg.eval(x, &f)
				// Direct: partial log-likelihoods, the best short, completed.
				type comp struct {
					c       int
					partial float64
				}
				cs := make([]comp, g.k)
				for c := 0; c < g.k; c++ {
					s := float64(g.gconst[c])
					for j := 0; j < g.pre; j++ {
						d := float64(x[j] - g.mean[c*g.d+j])
						s -= 0.5 * d * d * float64(g.prec[c*g.d+j])
					}
					cs[c] = comp{c, s}
				}
				sort.SliceStable(cs, func(a, b int) bool { return cs[a].partial > cs[b].partial })
				full := map[int]float64{}
				var m float64 = math.Inf(-1)
				for _, cp := range cs[:short] {
					s := cp.partial - float64(g.completion(x, cp.c))
					full[cp.c] = s
					m = math.Max(m, s)
				}
				var sum float64
				for _, s := range full {
					sum += math.Exp(s - m)
				}
				want := m + math.Log(sum)
				if math.Abs(float64(f.logLik)-want) > 1e-3 {
					t.Fatalf("short %d: logLik %v, direct %v", short, f.logLik, want)
				}
				got := map[int]float64{}
				for j := 0; j < f.n; j++ {
					got[int(f.idx[j])] = float64(f.post[j])
				}
				for c, s := range full {
					p := math.Exp(s - want)
					if p >= 1e-5 && math.Abs(got[c]-p) > 1e-4 {
						t.Fatalf("short %d: component %d posterior %v, direct %v", short, c, got[c], p)
					}
				}
			}
		}
	}
}

// TestPreselectMatchesDirect checks the grouped preselection pass bit for
// bit against the definition in float32, subtracted dimension by
// dimension in order, for the shipped model and for component counts
// that leave a partial group of four.
func TestPreselectMatchesDirect(t *testing.T) {
	base := shipped(t)
	vecs := newSpeaker(base, 7, 1).vectors(nil, 50)
	for _, k := range []int{64, 13, 6, 1} {
		full := base.c.g
		def := Definition{Components: k, Dim: full.d, Preselect: full.pre, Shortlist: min(full.short, k),
			Means: full.mean[:k*full.d], Variances: make([]float32, k*full.d), Weights: make([]float32, k)}
		for i := range def.Variances {
			def.Variances[i] = 1 / full.prec[i]
		}
		for c := range def.Weights {
			def.Weights[c] = float32(c + 1)
		}
		g := compileUBM(&def)
		acc := make([]float32, k)
		for i := 0; i+g.d <= len(vecs); i += g.d {
			x := vecs[i : i+g.d]
			g.preselect(x[:g.pre], acc)
			for c := range k {
				want := g.gconst[c]
				for j := range g.pre {
					d := x[j] - g.mean[c*g.d+j]
					want -= d * d * (0.5 * g.prec[c*g.d+j])
				}
				if math.Float32bits(acc[c]) != math.Float32bits(want) {
					t.Fatalf("%d components: component %d = %v, want %v", k, c, acc[c], want)
				}
			}
		}
	}
}
