package vad

import "math"

// fftSize is the length of the analysis window: 128 samples at 8 kHz
// (16 ms), so the bins are 62.5 Hz apart.
const fftSize = 128

// spectrum computes the power spectrum of a windowed 128-sample real frame.
// It packs the real input into 64 complex samples (even samples as real
// parts, odd as imaginary parts), runs a radix-4 decimation-in-time FFT of
// length 64 (three passes, the first without twiddles) and separates the
// two interleaved real transforms again (the "two real FFTs for the price
// of one" split). It holds only the working arrays; the tables are shared
// by every detector (fftTab), so bands allocates nothing and a detector
// stays small.
type spectrum struct {
	re, im [64]float64
}

// fftTables are the constant tables of spectrum.
type fftTables struct {
	rev2 [16]uint8     // base-4 digit reversal of 0..15
	tw16 [4][6]float64 // pass 2 twiddles W16^j, W16^2j, W16^3j (re, im)
	tw64 [16][6]float64
	spr  [65]float64 // cos(2πk/128)
	spi  [65]float64 // −sin(2πk/128)
	band [65]uint8   // the band of each bin in 2..62
}

// fftTab is built once, when the package is initialised.
var fftTab = newFFTTables()

func newFFTTables() *fftTables {
	s := new(fftTables)
	for b, e := range bandEdges {
		for k := e[0]; k <= e[1]; k++ {
			s.band[k] = uint8(b)
		}
	}
	for g := range s.rev2 {
		s.rev2[g] = uint8(g>>2 | (g&3)<<2)
	}
	tw := func(dst *[6]float64, j, l int) {
		for r := 1; r <= 3; r++ {
			a := -2 * math.Pi * float64(r*j) / float64(l)
			dst[2*r-2] = math.Cos(a)
			dst[2*r-1] = math.Sin(a)
		}
	}
	for j := range s.tw16 {
		tw(&s.tw16[j], j, 16)
	}
	for j := range s.tw64 {
		tw(&s.tw64[j], j, 64)
	}
	for k := range s.spr {
		a := 2 * math.Pi * float64(k) / 128
		s.spr[k] = math.Cos(a)
		s.spi[k] = -math.Sin(a)
	}
	return s
}

// bands writes into dst, for every band, the sum of |X[k]|² over the
// band's bins, where X is the 128-point DFT of x·w (sample by sample).
func (s *spectrum) bands(dst *[numBands]float64, x, w *[fftSize]float64) {
	re, im, tab := &s.re, &s.im, fftTab
	// Load, window and pass 1 (16 radix-4 butterflies without twiddles)
	// in one go. In digit-reversed order, positions 4g..4g+3 hold the
	// packed samples r+16j (j = 0..3), r = rev2(g), that is the real
	// samples 2r+32j (real part) and 2r+32j+1 (imaginary part).
	for g := 0; g < 16; g++ {
		r := 2 * int(tab.rev2[g]&15)
		xs := (*[98]float64)(x[r:])
		ws := (*[98]float64)(w[r:])
		a0r, a0i := xs[0]*ws[0], xs[1]*ws[1]
		a1r, a1i := xs[32]*ws[32], xs[33]*ws[33]
		a2r, a2i := xs[64]*ws[64], xs[65]*ws[65]
		a3r, a3i := xs[96]*ws[96], xs[97]*ws[97]
		s0r, s0i := a0r+a2r, a0i+a2i
		d0r, d0i := a0r-a2r, a0i-a2i
		s1r, s1i := a1r+a3r, a1i+a3i
		d1r, d1i := a1r-a3r, a1i-a3i
		o := (*[4]float64)(re[4*g:])
		q := (*[4]float64)(im[4*g:])
		o[0], q[0] = s0r+s1r, s0i+s1i
		o[2], q[2] = s0r-s1r, s0i-s1i
		// y1 = d0 − i·d1, y3 = d0 + i·d1
		o[1], q[1] = d0r+d1i, d0i-d1r
		o[3], q[3] = d0r-d1i, d0i+d1r
	}
	s.pass(4, tab.tw16[:])  // span 16
	s.pass(16, tab.tw64[:]) // span 64
	// Split the two interleaved real transforms, bins k and 64−k together:
	// with E = (Z[k] + conj Z[64−k])/2 and O = (Z[k] − conj Z[64−k])/2i,
	// X[k] = E + W^k·O and X[64−k] = conj(E − W^k·O), W = exp(−2πi/128).
	var acc [16]float64 // by band; 16 so that a mask proves the index
	for k := 2; k <= 32; k++ {
		m := 64 - k
		a, b := re[k], im[k]
		c, d := re[m&63], im[m&63]
		er, ei := 0.5*(a+c), 0.5*(b-d)
		or, oi := 0.5*(b+d), -0.5*(a-c)
		wr, wi := tab.spr[k], tab.spi[k]
		tr := wr*or - wi*oi
		ti := wr*oi + wi*or
		pr, pi := er+tr, ei+ti
		acc[tab.band[k]&15] += pr*pr + pi*pi
		if k < 32 {
			qr, qi := er-tr, ei-ti
			acc[tab.band[m]&15] += qr*qr + qi*qi
		}
	}
	copy(dst[:], acc[:numBands])
}

// pass runs the radix-4 decimation-in-time butterflies of span 4q over
// the 64 points: for every group and every j < q, the elements j, j+q,
// j+2q, j+3q of the group, with twiddles tw[j] = W^j, W^2j, W^3j as
// (re, im) pairs.
func (s *spectrum) pass(q int, tw [][6]float64) {
	for g := 0; g < 64; g += 4 * q {
		// The four quarters of the group, all of length q.
		r0, r1, r2, r3 := s.re[g:g+q], s.re[g+q:g+2*q], s.re[g+2*q:g+3*q], s.re[g+3*q:g+4*q]
		m0, m1, m2, m3 := s.im[g:g+q], s.im[g+q:g+2*q], s.im[g+2*q:g+3*q], s.im[g+3*q:g+4*q]
		tw := tw[:len(r0)]
		r1, r2, r3 = r1[:len(r0)], r2[:len(r0)], r3[:len(r0)]
		m0, m1, m2, m3 = m0[:len(r0)], m1[:len(r0)], m2[:len(r0)], m3[:len(r0)]
		for j := range r0 {
			t := &tw[j]
			a0r, a0i := r0[j], m0[j]
			b1r, b1i := r1[j], m1[j]
			b2r, b2i := r2[j], m2[j]
			b3r, b3i := r3[j], m3[j]
			a1r := b1r*t[0] - b1i*t[1]
			a1i := b1r*t[1] + b1i*t[0]
			a2r := b2r*t[2] - b2i*t[3]
			a2i := b2r*t[3] + b2i*t[2]
			a3r := b3r*t[4] - b3i*t[5]
			a3i := b3r*t[5] + b3i*t[4]
			s0r, s0i := a0r+a2r, a0i+a2i
			d0r, d0i := a0r-a2r, a0i-a2i
			s1r, s1i := a1r+a3r, a1i+a3i
			d1r, d1i := a1r-a3r, a1i-a3i
			r0[j], m0[j] = s0r+s1r, s0i+s1i
			r2[j], m2[j] = s0r-s1r, s0i-s1i
			r1[j], m1[j] = d0r+d1i, d0i-d1r
			r3[j], m3[j] = d0r-d1i, d0i+d1r
		}
	}
}
