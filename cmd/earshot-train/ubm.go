package main

import (
	"math"
	"sync"
)

// gmm is a diagonal-covariance Gaussian mixture in float64 for training.
type gmm struct {
	k, d int
	w    []float64
	mu   []float64 // k·d
	v    []float64 // k·d
}

// workers is fixed, not runtime.NumCPU(): the chunking of the data, and so
// the order of the floating-point sums, must not depend on the machine.
const workers = 4

type accum struct {
	n   []float64
	f   []float64
	s   []float64
	ll  float64
	buf []float64
}

func newAccum(k, d int) *accum {
	return &accum{n: make([]float64, k), f: make([]float64, k*d), s: make([]float64, k*d), buf: make([]float64, k)}
}

// logLiks writes ln(w_c N(x; μ_c, v_c)) for every component into out.
func (g *gmm) logLiks(x []float32, gc []float64, out []float64) {
	d := g.d
	for c := 0; c < g.k; c++ {
		mu := g.mu[c*d : c*d+d]
		v := g.v[c*d : c*d+d]
		var a float64
		for i := range mu {
			t := float64(x[i]) - mu[i]
			a += t * t / v[i]
		}
		out[c] = gc[c] - 0.5*a
	}
}

func (g *gmm) consts() []float64 {
	gc := make([]float64, g.k)
	for c := range gc {
		s := math.Log(g.w[c])
		for i := c * g.d; i < (c+1)*g.d; i++ {
			s -= 0.5 * math.Log(2*math.Pi*g.v[i])
		}
		gc[c] = s
	}
	return gc
}

// emStep runs one EM iteration over data (n·d) and returns the average
// log-likelihood per frame before the update.
func (g *gmm) emStep(data []float32, floor []float64) float64 {
	d, k := g.d, g.k
	n := len(data) / d
	gc := g.consts()
	acc := make([]*accum, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		acc[w] = newAccum(k, d)
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Add(1)
		go func(a *accum) {
			defer wg.Done()
			for t := lo; t < hi; t++ {
				x := data[t*d : t*d+d]
				g.logLiks(x, gc, a.buf)
				m := a.buf[0]
				for _, v := range a.buf[1:] {
					m = math.Max(m, v)
				}
				var s float64
				for c, v := range a.buf {
					a.buf[c] = math.Exp(v - m)
					s += a.buf[c]
				}
				a.ll += m + math.Log(s)
				for c := range a.buf {
					p := a.buf[c] / s
					if p < 1e-6 {
						continue
					}
					a.n[c] += p
					f := a.f[c*d : c*d+d]
					q := a.s[c*d : c*d+d]
					for i, v := range x {
						xv := float64(v)
						f[i] += p * xv
						q[i] += p * xv * xv
					}
				}
			}
		}(acc[w])
	}
	wg.Wait()
	tot := acc[0]
	for _, a := range acc[1:] {
		for i := range a.n {
			tot.n[i] += a.n[i]
		}
		for i := range a.f {
			tot.f[i] += a.f[i]
			tot.s[i] += a.s[i]
		}
		tot.ll += a.ll
	}
	for c := 0; c < k; c++ {
		nc := tot.n[c]
		if nc < 1e-3 {
			// An empty component keeps its parameters and a tiny weight.
			g.w[c] = 1e-6
			continue
		}
		g.w[c] = nc / float64(n)
		for i := c * d; i < (c+1)*d; i++ {
			m := tot.f[i] / nc
			v := tot.s[i]/nc - m*m
			g.mu[i] = m
			g.v[i] = math.Max(v, floor[i-c*d])
		}
	}
	var ws float64
	for _, w := range g.w {
		ws += w
	}
	for c := range g.w {
		g.w[c] /= ws
	}
	return tot.ll / float64(n)
}

// split doubles the number of components: each is replaced by two with
// the same variance and means displaced by ±eps standard deviations, each
// with half the weight.
func (g *gmm) split(eps float64) {
	k, d := g.k, g.d
	ng := &gmm{k: 2 * k, d: d, w: make([]float64, 2*k), mu: make([]float64, 2*k*d), v: make([]float64, 2*k*d)}
	for c := 0; c < k; c++ {
		for j := 0; j < 2; j++ {
			o := 2*c + j
			ng.w[o] = g.w[c] / 2
			sign := 1.0
			if j == 1 {
				sign = -1
			}
			for i := 0; i < d; i++ {
				sd := math.Sqrt(g.v[c*d+i])
				ng.mu[o*d+i] = g.mu[c*d+i] + sign*eps*sd
				ng.v[o*d+i] = g.v[c*d+i]
			}
		}
	}
	*g = *ng
}

// trainUBM grows a mixture of k components (a power of two) from one
// Gaussian by binary splitting, running iters EM iterations after each
// split and final more at the end. Variances are floored at floorFrac of
// the global variance.
func trainUBM(data []float32, d, k, iters, final int, floorFrac float64, logf func(string, ...any)) *gmm {
	n := len(data) / d
	g := &gmm{k: 1, d: d, w: []float64{1}, mu: make([]float64, d), v: make([]float64, d)}
	for t := 0; t < n; t++ {
		for i := 0; i < d; i++ {
			g.mu[i] += float64(data[t*d+i])
		}
	}
	for i := range g.mu {
		g.mu[i] /= float64(n)
	}
	for t := 0; t < n; t++ {
		for i := 0; i < d; i++ {
			x := float64(data[t*d+i]) - g.mu[i]
			g.v[i] += x * x
		}
	}
	floor := make([]float64, d)
	for i := range g.v {
		g.v[i] /= float64(n)
		floor[i] = floorFrac * g.v[i]
	}
	for g.k < k {
		g.split(0.2)
		it := iters
		if g.k == k {
			it = final
		}
		var ll float64
		for range it {
			ll = g.emStep(data, floor)
		}
		logf("ubm: %d components, avg log-likelihood %.4f", g.k, ll)
	}
	return g
}
