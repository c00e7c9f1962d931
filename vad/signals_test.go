package vad

import (
	"math"
	"math/rand/v2"
)

// Synthetic test signals. Levels are RMS in dB relative to full scale
// (32768).

func dbfs(db float64) float64 { return 32768 * math.Pow(10, db/20) }

// whiteNoise returns n samples of Gaussian white noise at the given level.
func whiteNoise(r *rand.Rand, n int, db float64) []float64 {
	out := make([]float64, n)
	a := dbfs(db)
	for i := range out {
		out[i] = r.NormFloat64() * a
	}
	return out
}

// tone returns n samples of a sine of frequency f at the given level.
func tone(n, rate int, f, db float64) []float64 {
	out := make([]float64, n)
	a := dbfs(db) * math.Sqrt2
	for i := range out {
		out[i] = a * math.Sin(2*math.Pi*f*float64(i)/float64(rate))
	}
	return out
}

// vowel returns n samples of a voiced, syllable-like sound: a glottal
// pulse train at about f0 Hz (with a slow vibrato) through three formant
// resonators (700, 1200 and 2600 Hz), its amplitude modulated at 4 Hz
// between 0.1 and 1 like syllables, scaled to the given level.
func vowel(n, rate int, f0, db float64) []float64 {
	out := make([]float64, n)
	phase := 0.0
	for i := range out {
		f := f0 * (1 + 0.05*math.Sin(2*math.Pi*3*float64(i)/float64(rate)))
		phase += f / float64(rate)
		if phase >= 1 {
			phase--
			out[i] = 1
		}
	}
	for _, fm := range [][2]float64{{700, 110}, {1200, 120}, {2600, 160}} {
		rr := math.Exp(-math.Pi * fm[1] / float64(rate))
		a1 := 2 * rr * math.Cos(2*math.Pi*fm[0]/float64(rate))
		a2 := -rr * rr
		var y1, y2 float64
		for i, x := range out {
			y := x + a1*y1 + a2*y2
			y2, y1 = y1, y
			out[i] = y
		}
	}
	for i := range out {
		out[i] *= 0.55 - 0.45*math.Cos(2*math.Pi*4*float64(i)/float64(rate))
	}
	return scaleTo(out, db)
}

func scaleTo(x []float64, db float64) []float64 {
	p := 0.0
	for _, v := range x {
		p += v * v
	}
	if p == 0 {
		return x
	}
	k := dbfs(db) / math.Sqrt(p/float64(len(x)))
	for i := range x {
		x[i] *= k
	}
	return x
}

// mix adds src into dst starting at sample at.
func mix(dst []float64, at int, src []float64) {
	for i, v := range src {
		if at+i < len(dst) {
			dst[at+i] += v
		}
	}
}

func toPCM(x []float64) []int16 {
	out := make([]int16, len(x))
	for i, v := range x {
		out[i] = int16(max(-32768, min(32767, math.Round(v))))
	}
	return out
}

// burstSignal is noise at noiseDB with vowel bursts at voiceDB on the
// given [start, end) intervals in seconds. It returns the PCM and the
// truth per 10 ms frame.
func burstSignal(seed uint64, rate int, seconds, noiseDB, voiceDB float64, bursts [][2]float64) ([]int16, []bool) {
	r := rand.New(rand.NewPCG(seed, 1))
	n := int(seconds * float64(rate))
	x := whiteNoise(r, n, noiseDB)
	if noiseDB <= -200 {
		x = make([]float64, n)
	}
	truth := make([]bool, n/(rate/100))
	for k, b := range bursts {
		s, e := int(b[0]*float64(rate)), int(b[1]*float64(rate))
		mix(x, s, vowel(e-s, rate, 110+20*float64(k%3), voiceDB))
		for f := int(b[0] * 100); f < int(b[1]*100) && f < len(truth); f++ {
			truth[f] = true
		}
	}
	return toPCM(x), truth
}
