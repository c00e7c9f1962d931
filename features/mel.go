package features

import "math"

// melOf is the HTK/Kaldi mel scale: 1127·ln(1 + f/700).
func melOf(hz float64) float64 { return 1127 * math.Log1p(hz/700) }

// filterbank is a bank of nf triangular filters equally spaced on the mel
// scale between low and high: the nf+2 edges e_0..e_{nf+1} divide
// [mel(low), mel(high)] evenly, and filter i rises linearly in mel from
// e_i to its peak (weight 1) at e_{i+1} and falls to zero at e_{i+2}.
// Weights are taken at the centre frequency k·rate/nfft of each FFT bin.
// The filters are not area-normalised: a constant gain per filter becomes
// a constant cepstral offset that mean normalisation removes.
//
// Between two consecutive edges the rising slope of one filter and the
// falling slope of the one before it add up to 1, so the bank is stored as
// nf+1 segments of bins with one rising weight r per bin: a bin k of
// segment s gives r·p[k] to filter s and (1−r)·p[k] to filter s−1. One
// multiplication per bin instead of two.
type filterbank struct {
	nf     int
	lo, hi int       // bins lo..hi−1 carry weight
	end    []int     // end[s]: one past the last bin of segment s; segment 0 starts at lo
	rise   []float64 // rising weight of bins lo..hi−1, indexed k−lo
}

// newFilterbank builds nf filters over [low, high] Hz for an nfft-point
// spectrum at rate Hz. It returns ErrBand when a filter covers no bin.
func newFilterbank(nf, nfft, rate int, low, high float64) (filterbank, error) {
	ml, mh := melOf(low), melOf(high)
	edge := func(i int) float64 { return ml + (mh-ml)*float64(i)/float64(nf+1) }
	binHz := float64(rate) / float64(nfft)
	fb := filterbank{nf: nf, lo: -1, end: make([]int, nf+1)}
	covered := make([]bool, nf)
	s := 0
	for k := 0; k <= nfft/2; k++ {
		m := melOf(float64(k) * binHz)
		if m <= edge(0) {
			continue
		}
		if m > edge(nf+1) {
			break
		}
		for m > edge(s+1) {
			s++
			fb.end[s-1] = k
		}
		if fb.lo < 0 {
			fb.lo = k
		}
		r := (m - edge(s)) / (edge(s+1) - edge(s))
		fb.rise = append(fb.rise, r)
		if s < nf && r > 0 {
			covered[s] = true
		}
		if s > 0 && r < 1 {
			covered[s-1] = true
		}
		fb.hi = k + 1
	}
	for ; s <= nf; s++ {
		fb.end[s] = fb.hi
	}
	for _, c := range covered {
		if !c {
			return filterbank{}, ErrBand
		}
	}
	return fb, nil
}

// apply writes the filter outputs Σ_k w_i(k)·p[k] into dst (len nf); only
// p[lo:hi] is read.
func (fb *filterbank) apply(dst, p []float64) {
	dst = dst[:fb.nf]
	p = p[fb.lo:fb.hi]
	r := fb.rise[:len(p)]
	k := 0
	for s, end := range fb.end {
		seg := p[k : end-fb.lo]
		rs := r[k : end-fb.lo]
		rs = rs[:len(seg)]
		k = end - fb.lo
		var a, b float64 // Σ r·p and Σ p over the segment
		for i, x := range seg {
			a += rs[i] * x
			b += x
		}
		if s < len(dst) {
			dst[s] = a
		}
		if s > 0 {
			dst[s-1] += b - a
		}
	}
}

// weights returns the dense nf × (nfft/2+1) weight matrix, for tests.
func (fb *filterbank) weights(bins int) [][]float64 {
	w := make([][]float64, fb.nf)
	for i := range w {
		w[i] = make([]float64, bins)
	}
	k := fb.lo
	for s, end := range fb.end {
		for ; k < end; k++ {
			r := fb.rise[k-fb.lo]
			if s < fb.nf {
				w[s][k] = r
			}
			if s > 0 {
				w[s-1][k] = 1 - r
			}
		}
	}
	return w
}
