package dsp_test

import (
	"fmt"
	"math"

	"github.com/earshot-voice/earshot/dsp"
)

// The power spectrum of a 1 kHz tone sampled at 8 kHz, in 16 bins: the
// energy is in bin 2 (1000 Hz / 500 Hz per bin).
func ExampleRealFFT_Power() {
	const n = 16
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Sin(2 * math.Pi * 1000 * float64(i) / 8000)
	}
	f := dsp.NewRealFFT(n)
	pow := make([]float64, n/2+1)
	f.Power(pow, x)
	for k, p := range pow {
		fmt.Printf("bin %d (%4d Hz): %5.1f\n", k, k*8000/n, math.Round(p*10)/10)
	}
	// Output:
	// bin 0 (   0 Hz):   0.0
	// bin 1 ( 500 Hz):   0.0
	// bin 2 (1000 Hz):  64.0
	// bin 3 (1500 Hz):   0.0
	// bin 4 (2000 Hz):   0.0
	// bin 5 (2500 Hz):   0.0
	// bin 6 (3000 Hz):   0.0
	// bin 7 (3500 Hz):   0.0
	// bin 8 (4000 Hz):   0.0
}
