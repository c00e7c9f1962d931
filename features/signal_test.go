package features

import (
	"math"
	"math/rand/v2"
)

// segment is a stretch of synthetic test audio.
type segment struct {
	seconds float64
	voiced  bool // a vowel when true, faint noise otherwise
	f0      float64
}

// synth makes deterministic test audio at rate Hz: voiced segments are a
// vowel-like source-filter signal (a glottal pulse train at f0 with 3 %
// vibrato through formant resonators at 730, 1090 and 2440 Hz, the /a/ of
// Peterson and Barney, plus breath noise), unvoiced segments faint white
// noise. It returns the samples and the voice decision of each 10 ms hop
// (true when the hop lies in a voiced segment).
func synth(rate int, seed uint64, segs []segment) ([]int16, []bool) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	hop := rate / 100
	var pcm []int16
	var voiced []bool
	type res struct{ a1, a2, g, y1, y2 float64 }
	formants := [][2]float64{{730, 60}, {1090, 90}, {2440, 120}}
	var rs []res
	for _, fb := range formants {
		rad := math.Exp(-math.Pi * fb[1] / float64(rate))
		th := 2 * math.Pi * fb[0] / float64(rate)
		rs = append(rs, res{a1: 2 * rad * math.Cos(th), a2: -rad * rad, g: 1 - rad})
	}
	phase := 0.0
	t := 0
	for _, s := range segs {
		n := int(s.seconds*float64(rate)) / hop * hop
		buf := make([]float64, n)
		peak := 0.0
		for i := range buf {
			var x float64
			if s.voiced {
				f := s.f0 * (1 + 0.03*math.Sin(2*math.Pi*5*float64(t)/float64(rate)))
				phase += f / float64(rate)
				if phase >= 1 {
					phase--
					x = 1
				}
				x += 0.02 * r.NormFloat64()
				for k := range rs {
					y := rs[k].g*x + rs[k].a1*rs[k].y1 + rs[k].a2*rs[k].y2
					rs[k].y2, rs[k].y1 = rs[k].y1, y
					x = y
				}
				x *= math.Min(1, math.Min(float64(i), float64(n-i))/(0.02*float64(rate)))
				peak = math.Max(peak, math.Abs(x))
			} else {
				x = 3 * r.NormFloat64()
			}
			buf[i] = x
			t++
		}
		gain := 1.0
		if s.voiced && peak > 0 {
			gain = 12000 / peak
		}
		for _, x := range buf {
			pcm = append(pcm, int16(math.Max(-32768, math.Min(32767, math.Round(gain*x)))))
		}
		for i := 0; i < n/hop; i++ {
			voiced = append(voiced, s.voiced)
		}
	}
	return pcm, voiced
}

// fixture is the test utterance of the golden and equivalence tests:
// 0.2 s of near silence, 0.5 s of vowel at 120 Hz, 0.15 s of near silence,
// 0.45 s of vowel at 210 Hz, 0.1 s of near silence.
func fixture(rate int) ([]int16, []bool) {
	return synth(rate, 1, []segment{
		{0.2, false, 0}, {0.5, true, 120}, {0.15, false, 0}, {0.45, true, 210}, {0.1, false, 0},
	})
}
