package dsp

import "math"

// RealFFT is a forward discrete Fourier transform of fixed power-of-two
// length n (≥ 8) for real input. It packs the input as m = n/2 complex
// samples (even samples real, odd samples imaginary) in bit-reversed order,
// runs an iterative decimation-in-time complex FFT of length m — a first
// twiddle-free pass of radix 8 (when log2 m is odd) or radix 4, then
// twiddled radix-4 passes — and splits the result into the n/2+1
// non-redundant bins of the real transform. The permutation, all twiddles
// and the work buffers are made once by newRealFFT, so a transform
// allocates nothing. For n = 256 that is 8-4-4 (three passes over 128
// points), for n = 512 4-4-4-4.
//
// X[k] = Σ x[t]·exp(−2πi·k·t/n), unscaled.
//
// Power and Spectrum take the input whole. A caller that windows its
// input can instead write it straight into the packed form (Input), then
// Transform and PowerFrom, and so save a pass over the samples.
//
// A RealFFT holds its work buffers: it is not safe for concurrent use.
type RealFFT struct {
	n        int
	first    int       // radix of the first pass: 4 or 8
	perm     []int     // perm[j]: bit-reversed position of packed sample j, len m
	tw       []float64 // radix-4 pass twiddles: per pass and j, cos and sin of W^j, W^2j, W^3j
	spC, spS []float64 // cos and sin of 2πk/n for k = 0..n/4, for the split step
	re, im   []float64 // work, len m
}

// NewRealFFT prepares a transform of length n, a power of two ≥ 8. It
// panics for any other n: lengths are constants of the caller's design.
func NewRealFFT(n int) *RealFFT {
	if n < 8 || n&(n-1) != 0 {
		panic("dsp: real FFT length must be a power of two ≥ 8")
	}
	m := n / 2
	f := &RealFFT{
		n:     n,
		first: 4,
		perm:  make([]int, m),
		spC:   make([]float64, n/4+1),
		spS:   make([]float64, n/4+1),
		re:    make([]float64, m),
		im:    make([]float64, m),
	}
	bits := 0
	for 1<<bits < m {
		bits++
	}
	if bits%2 == 1 {
		f.first = 8
	}
	for j := range f.perm {
		r := 0
		for b := 0; b < bits; b++ {
			r |= (j >> b & 1) << (bits - 1 - b)
		}
		f.perm[j] = r
	}
	for h := f.first; 4*h <= m; h *= 4 {
		for j := 0; j < h; j++ {
			for p := 1; p <= 3; p++ {
				a := 2 * math.Pi * float64(p*j) / float64(4*h)
				f.tw = append(f.tw, math.Cos(a), math.Sin(a))
			}
		}
	}
	for k := range f.spC {
		a := 2 * math.Pi * float64(k) / float64(n)
		f.spC[k] = math.Cos(a)
		f.spS[k] = math.Sin(a)
	}
	return f
}

// Len returns the transform's length n.
func (f *RealFFT) Len() int { return f.n }

// Input returns the packed input of the next Transform: sample pair j of
// the real input, x[2j] and x[2j+1], goes to re[perm[j]] and im[perm[j]]
// (perm is the bit reversal of the n/2 packed positions). The slices are
// the transform's own: fill every position, do not keep them, and do not
// change perm.
func (f *RealFFT) Input() (perm []int, re, im []float64) { return f.perm, f.re, f.im }

// load packs the real input x (len n) into f.re, f.im in bit-reversed
// order.
func (f *RealFFT) load(x []float64) {
	m := f.n / 2
	re, im := f.re[:m], f.im[:m]
	x = x[:2*m]
	for j, p := range f.perm {
		re[p] = x[2*j]
		im[p] = x[2*j+1]
	}
}

// Transform runs the length-n/2 complex FFT in place on the packed input
// (see Input). PowerFrom then reads the result.
func (f *RealFFT) Transform() {
	m := f.n / 2
	re, im := f.re[:m], f.im[:m]
	if f.first == 8 {
		first8(re, im)
	} else {
		first4(re, im)
	}
	// Radix-4 passes: each merges the radix-2 stages of half-size h and 2h.
	// With W = exp(−2πi/4h) and the four quarter-blocks a, b, c, d of each
	// 4h-point group: p = a, q = W^2j·b, u = W^j·c, v = W^3j·d, then
	// a, b, c, d = (p+q)+(u+v), (p−q)−i(u−v), (p+q)−(u+v), (p−q)+i(u−v).
	off := 0
	for h := f.first; 4*h <= m; h *= 4 {
		tw := f.tw[off : off+6*h]
		off += 6 * h
		for s := 0; s+4*h <= m; s += 4 * h {
			ar, ai := re[s:s+h], im[s:s+h]
			br, bi := re[s+h:s+2*h], im[s+h:s+2*h]
			cr, ci := re[s+2*h:s+3*h], im[s+2*h:s+3*h]
			dr, di := re[s+3*h:s+4*h], im[s+3*h:s+4*h]
			ai, br, bi = ai[:len(ar)], br[:len(ar)], bi[:len(ar)]
			cr, ci, dr, di = cr[:len(ar)], ci[:len(ar)], dr[:len(ar)], di[:len(ar)]
			tw := tw[:6*len(ar)]
			for j := range ar {
				w := tw[6*j : 6*j+6 : 6*j+6]
				// W^k = cos − i·sin, so W^k·(x + iy) = (cos·x + sin·y) + i(cos·y − sin·x).
				pr, pi := ar[j], ai[j]
				qr := w[2]*br[j] + w[3]*bi[j]
				qi := w[2]*bi[j] - w[3]*br[j]
				ur := w[0]*cr[j] + w[1]*ci[j]
				ui := w[0]*ci[j] - w[1]*cr[j]
				vr := w[4]*dr[j] + w[5]*di[j]
				vi := w[4]*di[j] - w[5]*dr[j]
				s0r, s0i := pr+qr, pi+qi
				s1r, s1i := pr-qr, pi-qi
				s2r, s2i := ur+vr, ui+vi
				s3r, s3i := ur-vr, ui-vi
				ar[j], ai[j] = s0r+s2r, s0i+s2i
				cr[j], ci[j] = s0r-s2r, s0i-s2i
				br[j], bi[j] = s1r+s3i, s1i-s3r
				dr[j], di[j] = s1r-s3i, s1i+s3r
			}
		}
	}
}

// first4 is the first pass when log2 m is even: 4-point DFTs of
// consecutive bit-reversed quadruples (the radix-2 stages of half-size 1
// and 2, whose twiddles are 1 and −i).
func first4(re, im []float64) {
	for i := 0; i+4 <= len(re) && i+4 <= len(im); i += 4 {
		r, q := re[i:i+4:i+4], im[i:i+4:i+4]
		b0r, b0i := r[0]+r[1], q[0]+q[1]
		b1r, b1i := r[0]-r[1], q[0]-q[1]
		b2r, b2i := r[2]+r[3], q[2]+q[3]
		b3r, b3i := r[2]-r[3], q[2]-q[3]
		r[0], q[0] = b0r+b2r, b0i+b2i
		r[2], q[2] = b0r-b2r, b0i-b2i
		r[1], q[1] = b1r+b3i, b1i-b3r
		r[3], q[3] = b1r-b3i, b1i+b3r
	}
}

// first8 is the first pass when log2 m is odd: 8-point DFTs of consecutive
// bit-reversed octets, two 4-point DFTs joined with the twiddles
// W8^k = 1, (1−i)/√2, −i, −(1+i)/√2.
func first8(re, im []float64) {
	const h = math.Sqrt2 / 2
	for i := 0; i+8 <= len(re) && i+8 <= len(im); i += 8 {
		r, q := re[i:i+8:i+8], im[i:i+8:i+8]
		// Two 4-point DFTs: A from r[0:4], B from r[4:8].
		t0r, t0i := r[0]+r[1], q[0]+q[1]
		t1r, t1i := r[0]-r[1], q[0]-q[1]
		t2r, t2i := r[2]+r[3], q[2]+q[3]
		t3r, t3i := r[2]-r[3], q[2]-q[3]
		a0r, a0i := t0r+t2r, t0i+t2i
		a2r, a2i := t0r-t2r, t0i-t2i
		a1r, a1i := t1r+t3i, t1i-t3r
		a3r, a3i := t1r-t3i, t1i+t3r
		t0r, t0i = r[4]+r[5], q[4]+q[5]
		t1r, t1i = r[4]-r[5], q[4]-q[5]
		t2r, t2i = r[6]+r[7], q[6]+q[7]
		t3r, t3i = r[6]-r[7], q[6]-q[7]
		b0r, b0i := t0r+t2r, t0i+t2i
		b2r, b2i := t0r-t2r, t0i-t2i
		b1r, b1i := t1r+t3i, t1i-t3r
		b3r, b3i := t1r-t3i, t1i+t3r
		// W8^k·B[k].
		w1r, w1i := h*(b1r+b1i), h*(b1i-b1r)
		w2r, w2i := b2i, -b2r
		w3r, w3i := h*(b3i-b3r), -h*(b3r+b3i)
		r[0], q[0] = a0r+b0r, a0i+b0i
		r[4], q[4] = a0r-b0r, a0i-b0i
		r[1], q[1] = a1r+w1r, a1i+w1i
		r[5], q[5] = a1r-w1r, a1i-w1i
		r[2], q[2] = a2r+w2r, a2i+w2i
		r[6], q[6] = a2r-w2r, a2i-w2i
		r[3], q[3] = a3r+w3r, a3i+w3i
		r[7], q[7] = a3r-w3r, a3i-w3i
	}
}

// Power writes |X[k]|² for k = 0..n/2 into dst (len ≥ n/2+1) for the real
// input x (len n).
func (f *RealFFT) Power(dst, x []float64) {
	f.load(x)
	f.Transform()
	f.PowerFrom(dst, 1)
}

// PowerFrom turns the result of Transform into the power spectrum of the
// real input: dst[k] = |X[k]|² for k = 0, n/2, and from ≤ k ≤ n/2−from
// (dst has len ≥ n/2+1). Bins that are not needed (below from and above
// n/2−from) are left alone.
func (f *RealFFT) PowerFrom(dst []float64, from int) {
	m := f.n / 2
	re, im := f.re[:m], f.im[:m]
	dst = dst[:m+1]
	dst[0] = (re[0] + im[0]) * (re[0] + im[0])
	dst[m] = (re[0] - im[0]) * (re[0] - im[0])
	// Pairs (k, m−k) for k = lo..m/2: the low bins walk up from lo, the
	// high bins down from m−lo.
	lo, half := max(from, 1), m/2
	if lo > half {
		return
	}
	n := half - lo + 1
	lr, li := re[lo:half+1], im[lo:half+1]
	hr, hi := re[half:m-lo+1], im[half:m-lo+1]
	dl, dh := dst[lo:half+1], dst[half:m-lo+1]
	spC, spS := f.spC[lo:half+1], f.spS[lo:half+1]
	lr, li, dl, spC, spS = lr[:n], li[:n], dl[:n], spC[:n], spS[:n]
	hr, hi, dh = hr[:n], hi[:n], dh[:n]
	for i := range lr {
		r := n - 1 - i // bin m−k, k = lo+i
		ar, ai := lr[i], li[i]
		br, bi := hr[r], hi[r]
		// Twice the even and odd half-spectra: E = Z[k] + conj(Z[m−k]),
		// O = (Z[k] − conj(Z[m−k]))/i.
		er, ei := ar+br, ai-bi
		or, oi := ai+bi, br-ar
		// W·O with W = exp(−2πik/n) = c − i·s.
		wr := spC[i]*or + spS[i]*oi
		wi := spC[i]*oi - spS[i]*or
		// X[k] = (E + W·O)/2, X[m−k] = conj(E − W·O)/2.
		dl[i] = 0.25 * ((er+wr)*(er+wr) + (ei+wi)*(ei+wi))
		dh[r] = 0.25 * ((er-wr)*(er-wr) + (ei-wi)*(ei-wi))
	}
}

// Spectrum writes X[k] for k = 0..n/2 into outRe and outIm (len ≥ n/2+1)
// for the real input x (len n): the complex form of Power.
func (f *RealFFT) Spectrum(outRe, outIm, x []float64) {
	f.load(x)
	f.Transform()
	m := f.n / 2
	re, im := f.re[:m], f.im[:m]
	outRe[0], outIm[0] = re[0]+im[0], 0
	outRe[m], outIm[m] = re[0]-im[0], 0
	for k := 1; k <= m/2; k++ {
		ar, ai := re[k], im[k]
		br, bi := re[m-k], im[m-k]
		er, ei := ar+br, ai-bi
		or, oi := ai+bi, br-ar
		wr := f.spC[k]*or + f.spS[k]*oi
		wi := f.spC[k]*oi - f.spS[k]*or
		outRe[k], outIm[k] = 0.5*(er+wr), 0.5*(ei+wi)
		outRe[m-k], outIm[m-k] = 0.5*(er-wr), -0.5*(ei-wi)
	}
}
