package vad

import "math"

// halfTaps is the number of non-zero taps on each side of the centre of the
// half-band filter: 2·halfTaps·2−1 = 31 taps, of which every other one
// (except the centre) is zero.
const halfTaps = 8

// decimator halves the sample rate with a 31-tap Blackman-windowed half-band
// low-pass filter (cut-off at a quarter of the input rate), so that 16 kHz
// input reaches the 8 kHz analysis without aliasing the 4–8 kHz band into
// it.
type decimator struct {
	h   [halfTaps]float64 // taps at odd offsets ±1, ±3, … ±15
	c0  float64           // centre tap
	buf [4*halfTaps - 2 + frame16k]float64
}

func newDecimator() *decimator {
	d := new(decimator)
	d.init()
	return d
}

func (d *decimator) init() {
	const n = 4*halfTaps - 1 // 31 taps
	sum := 0.5
	for k := 0; k < halfTaps; k++ {
		m := 2*k + 1 // offset from the centre
		x := math.Pi * float64(m) / 2
		w := 0.42 + 0.5*math.Cos(2*math.Pi*float64(m)/float64(n+1)) + 0.08*math.Cos(4*math.Pi*float64(m)/float64(n+1))
		d.h[k] = 0.5 * math.Sin(x) / x * w
		sum += 2 * d.h[k]
	}
	for k := range d.h {
		d.h[k] /= sum
	}
	d.c0 = 0.5 / sum
}

func (d *decimator) reset() {
	for i := range d.buf {
		d.buf[i] = 0
	}
}

// process filters the 160 samples of in and writes 80 samples into out.
func (d *decimator) process(in []int16, out *[frame8k]float64) {
	const hist = 4*halfTaps - 2 // 30 samples of history
	copy(d.buf[:hist], d.buf[frame16k:])
	b := d.buf[hist:]
	for i, v := range in[:frame16k] {
		b[i] = float64(v)
	}
	// Output i is centred on input sample 2i+1 of the frame, which sits at
	// buf[hist+2i+1−15]: the filter lags 15 input samples (0.94 ms).
	c0, h := d.c0, &d.h
	for i := range out {
		// The 31 input samples around the centre 2i+16 of buf.
		w := (*[4*halfTaps - 1]float64)(d.buf[2*i+1:])
		out[i] = c0*w[15] +
			h[0]*(w[14]+w[16]) + h[1]*(w[12]+w[18]) + h[2]*(w[10]+w[20]) + h[3]*(w[8]+w[22]) +
			h[4]*(w[6]+w[24]) + h[5]*(w[4]+w[26]) + h[6]*(w[2]+w[28]) + h[7]*(w[0]+w[30])
	}
}
