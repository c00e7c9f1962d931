package vad

import "math"

// numBands is the number of sub-bands the detector tracks.
const numBands = 9

// bandEdges are the first and last FFT bins (62.5 Hz apart) of each band:
// 125–250, 312–500, 562–750, 812–1062, 1125–1437, 1500–1937, 2000–2562,
// 2625–3375 and 3437–3875 Hz. The bands widen with frequency, like the
// ear's critical bands, and the telephone band (300–3400 Hz) falls on band
// edges so that band-limited audio leaves whole bands empty rather than
// half-filled.
var bandEdges = [numBands][2]int{{2, 4}, {5, 8}, {9, 12}, {13, 17}, {18, 23}, {24, 31}, {32, 41}, {42, 54}, {55, 62}}

// frontEnd turns 10 ms frames of 8 kHz samples into sub-band powers over a
// 128-sample Hann window that ends with the frame.
type frontEnd struct {
	hist [fftSize]float64 // the last 128 samples, oldest first
	spec spectrum
}

// hann is the analysis window, shared by every front end.
var hann = func() (w [fftSize]float64) {
	for i := range w {
		w[i] = 0.5 - 0.5*math.Cos(2*math.Pi*(float64(i)+0.5)/fftSize)
	}
	return w
}()

func (f *frontEnd) reset() {
	f.hist = [fftSize]float64{}
}

// push appends the 80 samples of x to the history.
func (f *frontEnd) push(x *[frame8k]float64) {
	const keep = fftSize - frame8k
	copy(f.hist[:keep], f.hist[frame8k:])
	copy(f.hist[keep:], x[:frame8k])
}

// bands computes the band powers of the current window into dst.
func (f *frontEnd) bands(dst *[numBands]float64) {
	f.spec.bands(dst, &f.hist, &hann)
}
