package vad

import (
	"math"
	"math/rand/v2"
	"testing"
)

// benchSignal returns n frames of a synthetic call-like signal: speech-like
// bursts (a pulse train through two resonators) in white noise.
func benchSignal(rate, seconds int) []int16 {
	n := rate * seconds
	out := make([]int16, n)
	r := rand.New(rand.NewPCG(7, 7))
	var y1, y2 float64
	period := rate / 120
	for i := range out {
		on := (i/(rate/2))%3 != 0
		x := r.NormFloat64() * 30
		if on && i%period == 0 {
			x += 3000
		}
		y := x + 1.6*y1 - 0.8*y2
		y2, y1 = y1, y
		out[i] = int16(max(-32768, min(32767, math.Round(y))))
	}
	return out
}

func benchDetector(b *testing.B, rate int, withRef bool) {
	d, err := New(Options{SampleRate: rate})
	if err != nil {
		b.Fatal(err)
	}
	sig := benchSignal(rate, 10)
	ref := benchSignal(rate, 10)
	fs := d.FrameSize()
	frames := len(sig) / fs
	b.ReportAllocs()
	b.ResetTimer()
	f := 0
	for i := 0; i < b.N; i++ {
		fr := sig[f*fs : (f+1)*fs]
		if withRef {
			_, err = d.ProcessWithReference(fr, ref[f*fs:(f+1)*fs])
		} else {
			_, err = d.Process(fr)
		}
		if err != nil {
			b.Fatal(err)
		}
		if f++; f == frames {
			f = 0
		}
	}
	b.StopTimer()
	// One op is 10 ms of audio.
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)*0.010/s, "x_realtime")
	}
}

func BenchmarkProcess8k(b *testing.B)               { benchDetector(b, 8000, false) }
func BenchmarkProcess16k(b *testing.B)              { benchDetector(b, 16000, false) }
func BenchmarkProcessWithReference8k(b *testing.B)  { benchDetector(b, 8000, true) }
func BenchmarkProcessWithReference16k(b *testing.B) { benchDetector(b, 16000, true) }
