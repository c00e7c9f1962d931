package features

import "testing"

// BenchmarkExtractor pushes 10 ms hops of a synthetic vowel. With all hops
// voiced every hop computes and emits a full vector: ns/op is the cost per
// frame and x_realtime the seconds of audio processed per second on one
// core. The "talk-40" cases mark 1 s of every 2.5 s voiced, closer to one
// side of a call.
func BenchmarkExtractor(b *testing.B) {
	always := func(int) bool { return true }
	talk40 := func(h int) bool { return h%250 < 100 }
	cases := []struct {
		name   string
		opts   Options
		voiced func(h int) bool
	}{
		{"8k", Options{}, always},
		{"8k-variance", Options{NormVariance: true}, always},
		{"8k-talk-40", Options{}, talk40},
		{"16k", Options{SampleRate: 16000}, always},
		{"16k-talk-40", Options{SampleRate: 16000}, talk40},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			e, err := New(c.opts)
			if err != nil {
				b.Fatal(err)
			}
			rate := c.opts.SampleRate
			if rate == 0 {
				rate = 8000
			}
			pcm, _ := synth(rate, 2, []segment{{5, true, 130}})
			hop := e.HopSize()
			hops := len(pcm) / hop
			dst := make([]float32, 0, e.Dim())
			b.ReportAllocs()
			h := 0
			for b.Loop() {
				dst, _, _ = e.Append(dst[:0], pcm[h*hop:(h+1)*hop], c.voiced(h))
				if h++; h == hops {
					h = 0
				}
			}
			b.ReportMetric(float64(b.N)*0.01/b.Elapsed().Seconds(), "x_realtime")
		})
	}
}

func BenchmarkNormalize(b *testing.B) {
	e, _ := New(Options{Norm: NormOff})
	pcm, voiced := synth(8000, 2, []segment{{3, true, 130}})
	vecs := runAll(b, e, pcm, voiced, 10)
	work := make([]float32, len(vecs))
	b.ReportAllocs()
	for b.Loop() {
		copy(work, vecs)
		if err := Normalize(work, e.Dim(), true); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(3*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
}

// BenchmarkNew measures making an extractor, once per call in Earshot:
// B/op is its memory.
func BenchmarkNew(b *testing.B) {
	for _, c := range []struct {
		name string
		opts Options
	}{{"8k", Options{}}, {"16k", Options{SampleRate: 16000}}, {"8k-trailing", Options{Norm: NormTrailing}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := New(c.opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
