package vad

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSpectrumMatchesDFT compares the band powers of the packed FFT with a
// direct DFT, for random windows and a random window function.
func TestSpectrumMatchesDFT(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s spectrum
	for trial := 0; trial < 5; trial++ {
		var x, w [fftSize]float64
		for i := range x {
			x[i] = r.NormFloat64() * 1000
			w[i] = r.Float64()
		}
		var got [numBands]float64
		s.bands(&got, &x, &w)
		for b, e := range bandEdges {
			want := 0.0
			for k := e[0]; k <= e[1]; k++ {
				var re, im float64
				for n, v := range x {
					a := -2 * math.Pi * float64(k*n) / fftSize
					re += v * w[n] * math.Cos(a)
					im += v * w[n] * math.Sin(a)
				}
				want += re*re + im*im
			}
			if math.Abs(got[b]-want) > 1e-9*want {
				t.Fatalf("trial %d band %d: got %g, want %g", trial, b, got[b], want)
			}
		}
	}
}
