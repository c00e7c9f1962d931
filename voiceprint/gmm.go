package voiceprint

import (
	"math"
)

// maxShortlist bounds Definition.Shortlist so that a frame's evaluation
// fits in fixed arrays.
const maxShortlist = 16

// pruneNats: a shortlisted component whose log-likelihood over the
// preselection dimensions is this far below the best complete one is not
// completed (its posterior would be below e^−12 ≈ 6·10⁻⁶; stats.add skips
// posteriors below 10⁻⁵).
const pruneNats = 12

// ubm is a Definition compiled for scoring: inverse variances, whitening
// factors and per-component constants precomputed, in float32.
type ubm struct {
	k, d, pre, short int
	mean             []float32 // k·d, component major
	prec             []float32 // k·d, 1/σ²
	isd              []float32 // k·d, 1/σ
	sd               []float32 // k·d, σ
	gconst           []float32 // k: ln w − ½ Σ ln(2πσ²)
	// preT holds the first pre dimensions of mean and ½·prec for the
	// preselection pass, four components at a time: for each group of
	// four (the last padded) and each dimension, the four means, then the
	// four ½·precisions. A group's four partial log-likelihoods then stay
	// in registers over all pre dimensions.
	preT      []float32
	relevance float32
}

func compileUBM(def *Definition) *ubm {
	k, d := def.Components, def.Dim
	g := &ubm{
		k: k, d: d, pre: def.Preselect, short: def.Shortlist,
		mean:      append([]float32(nil), def.Means...),
		prec:      make([]float32, k*d),
		isd:       make([]float32, k*d),
		sd:        make([]float32, k*d),
		gconst:    make([]float32, k),
		relevance: float32(def.Relevance),
	}
	var wsum float64
	for _, w := range def.Weights {
		wsum += float64(w)
	}
	for c := 0; c < k; c++ {
		s := math.Log(float64(def.Weights[c]) / wsum)
		for i := c * d; i < (c+1)*d; i++ {
			v := float64(def.Variances[i])
			g.prec[i] = float32(1 / v)
			g.isd[i] = float32(1 / math.Sqrt(v))
			g.sd[i] = float32(math.Sqrt(v))
			s -= 0.5 * math.Log(2*math.Pi*v)
		}
		g.gconst[c] = float32(s)
	}
	g.preT = make([]float32, (k+3)/4*g.pre*8)
	for c := 0; c < k; c++ {
		for i := 0; i < g.pre; i++ {
			b := g.preT[(c/4*g.pre+i)*8:]
			b[c%4] = g.mean[c*d+i]
			b[4+c%4] = 0.5 * g.prec[c*d+i]
		}
	}
	return g
}

// preselect writes into acc (len g.k) each component's log-likelihood
// over the first len(x) = g.pre dimensions: ln w − ½ Σ ln(2πσ²) −
// Σ ½(x−μ)²/σ², subtracted dimension by dimension in order.
func (g *ubm) preselect(x, acc []float32) {
	k := len(acc)
	span := len(x) * 8
	for q := 0; q < k; q += 4 {
		blk := g.preT[q/4*span : q/4*span+span]
		var a [4]float32
		for j := range min(4, k-q) {
			a[j] = g.gconst[q+j]
		}
		a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
		for i, xi := range x {
			b := blk[i*8 : i*8+8 : i*8+8]
			t0 := xi - b[0]
			t1 := xi - b[1]
			t2 := xi - b[2]
			t3 := xi - b[3]
			a0 -= t0 * t0 * b[4]
			a1 -= t1 * t1 * b[5]
			a2 -= t2 * t2 * b[6]
			a3 -= t3 * t3 * b[7]
		}
		a = [4]float32{a0, a1, a2, a3}
		copy(acc[q:min(q+4, k)], a[:])
	}
}

// frame is the evaluation of one feature vector against the UBM: the
// shortlisted components, their log-likelihoods ln(w·N(x)) and posteriors.
type frame struct {
	n    int
	idx  [maxShortlist]int32
	ll   [maxShortlist]float32
	post [maxShortlist]float32
	// logLik is ln p(x) over the shortlist.
	logLik float32
	// acc is scratch for the preselection, one value per component.
	acc []float32
}

// newFrame returns a frame with its scratch sized for g.
func (g *ubm) newFrame() frame {
	return frame{acc: make([]float32, g.k)}
}

// eval fills f for the vector x (len ≥ g.d). It evaluates every component
// over the first g.pre dimensions, keeps the g.short best of those within
// reach of the best (see pruneNats), completes them over the remaining
// dimensions and normalises their posteriors.
func (g *ubm) eval(x []float32, f *frame) {
	d, pre, short := g.d, g.pre, g.short
	x = x[:d]
	k := g.k
	acc := f.acc[:k]
	g.preselect(x[:pre], acc)
	// The best component over the preselection dimensions, completed,
	// bounds which others can matter: completion only subtracts, so a
	// component whose partial log-likelihood is pruneNats below that
	// complete value would get a posterior below e^−pruneNats, which the
	// statistics skip anyway. Usually only a few components are left to
	// sort and complete.
	top, topV := 0, acc[0]
	for c, v := range acc {
		if v > topV {
			top, topV = c, v
		}
	}
	full := topV - g.completion(x, top)
	floor := full - pruneNats
	n := 0
	for c, v := range acc {
		if v < floor || (n == short && v <= f.ll[n-1]) {
			continue
		}
		// Insert v into the descending shortlist.
		j := n
		if n < short {
			n++
		} else {
			j = n - 1
		}
		for j > 0 && f.ll[j-1] < v {
			f.ll[j] = f.ll[j-1]
			f.idx[j] = f.idx[j-1]
			j--
		}
		f.ll[j] = v
		f.idx[j] = int32(c)
	}
	for j := 0; j < n; j++ {
		if c := int(f.idx[j]); c == top {
			f.ll[j] = full
		} else {
			f.ll[j] -= g.completion(x, c)
		}
	}
	f.n = n
	f.logLik = logSumExp(f.ll[:n], f.post[:n])
}

// completion returns what completing component c over the dimensions
// after the preselection subtracts from its log-likelihood:
// ½ Σ (x−μ)²/σ² over them (0 when the preselection covers every
// dimension).
func (g *ubm) completion(x []float32, c int) float32 {
	d, pre := g.d, g.pre
	if pre >= d {
		return 0
	}
	mu := g.mean[c*d+pre : c*d+d]
	pr := g.prec[c*d+pre : c*d+d]
	pr = pr[:len(mu)]
	xs := x[pre:d]
	xs = xs[:len(mu)]
	a0, a1, a2, a3 := mahalanobis4(xs, mu, pr)
	return 0.5 * (a0 + a1 + a2 + a3)
}

// mahalanobis4 returns Σ (x−μ)²·p over the dimensions in four partial
// sums (independent chains for the CPU). len(mu) and len(p) must be at
// least len(x).
func mahalanobis4(x, mu, p []float32) (a0, a1, a2, a3 float32) {
	mu = mu[:len(x)]
	p = p[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		x4, m4, p4 := x[i:i+4:i+4], mu[i:i+4:i+4], p[i:i+4:i+4]
		t0 := x4[0] - m4[0]
		t1 := x4[1] - m4[1]
		t2 := x4[2] - m4[2]
		t3 := x4[3] - m4[3]
		a0 += t0 * t0 * p4[0]
		a1 += t1 * t1 * p4[1]
		a2 += t2 * t2 * p4[2]
		a3 += t3 * t3 * p4[3]
	}
	for ; i < len(x); i++ {
		t := x[i] - mu[i]
		a0 += t * t * p[i]
	}
	return a0, a1, a2, a3
}

// logSumExp returns ln Σ exp(ll[i]) and writes the normalised posteriors
// exp(ll[i] − result) to post.
func logSumExp(ll, post []float32) float32 {
	post = post[:len(ll)]
	m := ll[0]
	for _, v := range ll[1:] {
		if v > m {
			m = v
		}
	}
	var s float32
	for i, v := range ll {
		e := float32(math.Exp(float64(v - m)))
		post[i] = e
		s += e
	}
	inv := 1 / s
	for i := range post {
		post[i] *= inv
	}
	return m + float32(math.Log(float64(s)))
}

// stats are the zeroth and first order Baum-Welch statistics of a set of
// frames against the UBM: N[c] = Σ γ_c(t), F[c·d+i] = Σ γ_c(t)·x_i(t).
type stats struct {
	n []float32
	f []float32
	// frames counts the vectors accumulated.
	frames int
}

func newStats(g *ubm) stats {
	return stats{n: make([]float32, g.k), f: make([]float32, g.k*g.d)}
}

func (s *stats) reset() {
	clear(s.n)
	clear(s.f)
	s.frames = 0
}

// add accumulates one evaluated frame.
func (s *stats) add(g *ubm, x []float32, f *frame) {
	d := g.d
	x = x[:d]
	for j := 0; j < f.n; j++ {
		p := f.post[j]
		if p < 1e-5 {
			continue
		}
		c := int(f.idx[j])
		s.n[c] += p
		fc := s.f[c*d : c*d+d]
		fc = fc[:len(x)]
		for i, v := range x {
			fc[i] += p * v
		}
	}
	s.frames++
}

// addStats adds o into s.
func (s *stats) addStats(o *stats) {
	for i, v := range o.n {
		s.n[i] += v
	}
	for i, v := range o.f {
		s.f[i] += v
	}
	s.frames += o.frames
}

// difference sets s to a − b, the statistics of the frames of a that are
// not in b.
func (s *stats) difference(a, b *stats) {
	for i := range s.n {
		s.n[i] = a.n[i] - b.n[i]
	}
	for i := range s.f {
		s.f[i] = a.f[i] - b.f[i]
	}
	s.frames = a.frames - b.frames
}

// offsets writes the whitened MAP mean offsets of the statistics into dst
// (k·d): dst = ((F + rμ)/(N + r) − μ)/σ = (F − Nμ)/((N + r)σ).
func (g *ubm) offsets(dst []float32, s *stats) {
	d := g.d
	for c := 0; c < g.k; c++ {
		a := 1 / (s.n[c] + g.relevance)
		for i := c * d; i < c*d+d; i++ {
			dst[i] = (s.f[i] - s.n[c]*g.mean[i]) * a * g.isd[i]
		}
	}
}

// centred writes the whitened centred first-order statistics normalised by
// the frame count into dst (k·d): dst = (F − Nμ)/(σ·T) for T frames.
func (g *ubm) centred(dst []float32, s *stats) {
	t := float32(s.frames)
	if t < 1 {
		t = 1
	}
	inv := 1 / t
	d := g.d
	for c := 0; c < g.k; c++ {
		for i := c * d; i < c*d+d; i++ {
			dst[i] = (s.f[i] - s.n[c]*g.mean[i]) * g.isd[i] * inv
		}
	}
}
