package codec

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sideTaps are the decimator's non-zero side taps h1, h3, ..., h39 (Q30).
var sideTaps = [...]int64{h1, h3, h5, h7, h9, h11, h13, h15, h17, h19, h21, h23, h25, h27, h29, h31, h33, h35, h37, h39}

// fullTaps returns all 79 taps as float64, centre at index 39.
func fullTaps() []float64 {
	h := make([]float64, decimTaps)
	c := decimHist / 2
	h[c] = float64(h0) / (1 << decimQ)
	for i, v := range sideTaps {
		k := 2*i + 1
		h[c-k] = float64(v) / (1 << decimQ)
		h[c+k] = h[c-k]
	}
	return h
}

// TestDecimatorTaps re-derives the constants from the design written in
// decimator.go: ideal half-band taps times a Kaiser window (β = 9.15), side
// taps scaled to sum to 1/2, Q30 rounding with the residue added to h1.
func TestDecimatorTaps(t *testing.T) {
	const beta = 9.15
	c := decimHist / 2
	bessel0 := func(x float64) float64 { // I0 by its power series
		sum, term := 1.0, 1.0
		for k := 1; k < 60; k++ {
			term *= x / 2 / float64(k)
			sum += term * term
		}
		return sum
	}
	ideal := make([]float64, len(sideTaps))
	total := 0.0
	for i := range ideal {
		k := float64(2*i + 1)
		r := k / float64(c)
		ideal[i] = math.Sin(math.Pi*k/2) / (math.Pi * k) * bessel0(beta*math.Sqrt(1-r*r)) / bessel0(beta)
		total += 2 * ideal[i]
	}
	want := make([]int64, len(ideal))
	var sum int64
	for i, v := range ideal {
		want[i] = int64(math.Round(v * 0.5 / total * (1 << decimQ)))
		sum += 2 * want[i]
	}
	want[0] += (1<<(decimQ-1) - sum) / 2
	if !slices.Equal(sideTaps[:], want) {
		t.Errorf("taps in decimator.go\n%v\ndiffer from the design\n%v", sideTaps, want)
	}
	if sum := 2*sumOf(sideTaps[:]) + h0; sum != 1<<decimQ {
		t.Errorf("DC gain %d/2^30, want exactly 1", sum)
	}
}

func sumOf(v []int64) (s int64) {
	for _, x := range v {
		s += x
	}
	return s
}

// gainDB returns the filter's gain at f Hz (sampling at 16 kHz) in dB.
func gainDB(h []float64, f float64) float64 {
	var re, im float64
	for i, v := range h {
		phi := 2 * math.Pi * f / 16000 * float64(i)
		re += v * math.Cos(phi)
		im -= v * math.Sin(phi)
	}
	return 20 * math.Log10(math.Hypot(re, im))
}

// TestDecimatorResponse measures the frequency response the doc comment of
// decimator.go states.
func TestDecimatorResponse(t *testing.T) {
	h := fullTaps()
	ripple, stop, worst := 0.0, -1000.0, 0.0
	for f := 0.0; f <= 3400; f += 0.5 {
		ripple = max(ripple, math.Abs(gainDB(h, f)))
	}
	for f := 4600.0; f <= 8000; f += 0.5 {
		if g := gainDB(h, f); g > stop {
			stop, worst = g, f
		}
	}
	t.Logf("passband 0-3400 Hz ripple %.5f dB; stopband 4600-8000 Hz %.2f dB (at %.1f Hz); 3900 Hz %.2f dB; 4000 Hz %.3f dB",
		ripple, stop, worst, gainDB(h, 3900), gainDB(h, 4000))
	if ripple > 0.0003 {
		t.Errorf("passband ripple %.5f dB > 0.0003 dB", ripple)
	}
	if stop > -91.3 {
		t.Errorf("stopband %.2f dB at %.1f Hz, want at most -91.3 dB", stop, worst)
	}
	if g := gainDB(h, 4000); math.Abs(g+6.0206) > 0.001 {
		t.Errorf("gain at 4000 Hz %.4f dB, want -6.02 dB (half-band)", g)
	}
}

// TestDecimatorSines runs 16-bit sines through the decimator and measures
// the output level: the passband passes unchanged and the stopband is gone
// to within the 16-bit rounding.
func TestDecimatorSines(t *testing.T) {
	tests := []struct {
		name      string
		freq      float64
		amplitude float64
		// the output's RMS relative to the input's, and the tolerance
		gain, tolerance float64
	}{
		{"300 Hz", 300, 30000, 1, 0.0005},
		{"1 kHz", 1000, 30000, 1, 0.0005},
		{"3.4 kHz", 3400, 30000, 1, 0.0005},
		{"3.9 kHz at the -3 dB point", 3900, 30000, math.Pow(10, -3.2/20), 0.01},
		{"4.6 kHz", 4600, 30000, 0, 1.0 / 30000},
		{"5 kHz", 5000, 30000, 0, 1.0 / 30000},
		{"7 kHz", 7000, 30000, 0, 1.0 / 30000},
		{"7.99 kHz", 7990, 30000, 0, 1.0 / 30000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := make([]int16, 32000)
			for i := range in {
				in[i] = int16(math.Round(tt.amplitude * math.Sin(2*math.Pi*tt.freq*float64(i)/16000)))
			}
			var d Decimator
			out := d.Append(nil, in)[decimHist:] // past the start-up transient
			var sum float64
			for _, v := range out {
				sum += float64(v) * float64(v)
			}
			gain := math.Sqrt(sum/float64(len(out))) / (tt.amplitude / math.Sqrt2)
			if math.Abs(gain-tt.gain) > tt.tolerance {
				t.Errorf("output RMS gain %.6f (%.1f dB), want %.6f ± %g", gain, 20*math.Log10(gain), tt.gain, tt.tolerance)
			}
		})
	}
}

func TestDecimatorImpulseAndDC(t *testing.T) {
	tests := []struct {
		name string
		in   func(i int) int16
		want func(m int) int16
	}{
		// An impulse at an odd input meets only the centre tap (1/2), 39
		// input samples later: output 20 (= (1+39)/2) holds it, every other
		// output is zero, as in every half-band filter.
		{"impulse at input 1", func(i int) int16 {
			if i == 1 {
				return 20000
			}
			return 0
		}, func(m int) int16 {
			if m == 20 {
				return 10000
			}
			return 0
		}},
		// An impulse at an even input meets the side taps: output m holds
		// the tap at distance 2m-39 from the centre.
		{"impulse at input 0", func(i int) int16 {
			if i == 0 {
				return 1 << 14
			}
			return 0
		}, func(m int) int16 {
			k := 2*m - decimHist/2
			if k < -decimHist/2 || k > decimHist/2 {
				return 0
			}
			return int16((sideTaps[abs(k)/2]<<14 + 1<<(decimQ-1)) >> decimQ)
		}},
		// DC passes exactly once the window is full.
		{"DC", func(int) int16 { return -1234 }, func(m int) int16 {
			if m < decimHist/2 {
				return 0 // not checked: start-up
			}
			return -1234
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := make([]int16, 200)
			for i := range in {
				in[i] = tt.in(i)
			}
			var d Decimator
			out := d.Append(nil, in)
			for m, v := range out {
				if tt.name == "DC" && m < decimHist/2 {
					continue
				}
				if want := tt.want(m); v != want {
					t.Errorf("output %d = %d, want %d", m, v, want)
				}
			}
		})
	}
}

// TestDecimatorSaturation drives the filter past full scale: outputs clamp
// instead of wrapping.
func TestDecimatorSaturation(t *testing.T) {
	h := fullTaps()
	for _, sign := range []float64{1, -1} {
		window := make([]int16, decimTaps)
		for i, v := range h {
			switch {
			case v*sign > 0:
				window[i] = 32767
			case v*sign < 0:
				window[i] = -32768
			}
		}
		// The window ends at input 78, an even index: output 39.
		var d Decimator
		out := d.Append(nil, window)
		want := int16(32767)
		if sign < 0 {
			want = -32768
		}
		if got := out[len(out)-1]; got != want {
			t.Errorf("sign %v: output %d, want %d", sign, got, want)
		}
	}
}

// TestDecimatorChunks checks that chunk boundaries do not matter.
func TestDecimatorChunks(t *testing.T) {
	in := make([]int16, 5000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range in {
		in[i] = int16(rng.IntN(65536) - 32768)
	}
	var whole Decimator
	want := whole.Append(nil, in)
	if len(want) != (len(in)+1)/2 {
		t.Fatalf("%d outputs for %d inputs, want %d", len(want), len(in), (len(in)+1)/2)
	}
	sizes := []struct {
		name string
		next func() int
	}{
		{"one sample", func() int { return 1 }},
		{"two samples", func() int { return 2 }},
		{"77", func() int { return 77 }},
		{"78, the history", func() int { return 78 }},
		{"79, the taps", func() int { return 79 }},
		{"random up to 200 with empties", func() int { return rng.IntN(201) }},
		{"random up to 3", func() int { return rng.IntN(4) }},
		{"random up to 2000", func() int { return rng.IntN(2001) }},
	}
	for _, s := range sizes {
		t.Run(s.name, func(t *testing.T) {
			var d Decimator
			got := []int16{99}
			for rest := in; len(rest) > 0; {
				n := min(s.next(), len(rest))
				got = d.Append(got, rest[:n])
				rest = rest[n:]
			}
			if !slices.Equal(got[1:], want) {
				t.Errorf("chunked output differs from the whole (%d vs %d samples)", len(got)-1, len(want))
			}
			d.Reset()
			if again := d.Append(nil, in); !slices.Equal(again, want) {
				t.Errorf("output after Reset differs from a fresh Decimator")
			}
		})
	}
}

// TestDecimatorMatchesConvolution compares the unrolled filter with a plain
// convolution over all 79 taps of a full-scale random signal, exactly: a
// wrong index or a missing term (even h39, below one LSB on its own) changes
// the rounding of many outputs.
func TestDecimatorMatchesConvolution(t *testing.T) {
	var taps [decimTaps]int64
	c := decimHist / 2
	taps[c] = h0
	for i, v := range sideTaps {
		taps[c-2*i-1], taps[c+2*i+1] = v, v
	}
	rng := rand.New(rand.NewPCG(3, 4))
	in := make([]int16, 4001)
	for i := range in {
		in[i] = int16(rng.IntN(65536) - 32768)
	}
	var d Decimator
	got := d.Append(nil, in)
	for m := range (len(in) + 1) / 2 {
		var acc int64
		for k, h := range taps {
			if i := 2*m - k; i >= 0 {
				acc += h * int64(in[i])
			}
		}
		want := int16(max(-32768, min(32767, (acc+1<<(decimQ-1))>>decimQ)))
		if got[m] != want {
			t.Fatalf("output %d = %d, convolution gives %d", m, got[m], want)
		}
	}
}
