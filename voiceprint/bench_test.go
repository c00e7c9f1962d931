package voiceprint

import (
	"testing"

	"github.com/earshot-voice/earshot/features"
)

// framesPerSecond: one feature vector per 10 ms hop of voice.
const framesPerSecond = 100

func reportFrames(b *testing.B, frames int) {
	ns := float64(b.Elapsed().Nanoseconds()) / float64(frames)
	b.ReportMetric(ns, "ns/frame")
	b.ReportMetric(1e9/framesPerSecond/ns, "x_realtime")
}

func BenchmarkEnrollerAdd(b *testing.B) {
	m := shipped(b)
	vecs := newSpeaker(m, 1, 0.5).vectors(nil, 4096)
	e := m.NewEnroller()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		j := i % 4096
		_ = e.Add(vecs[j*m.Dim : (j+1)*m.Dim])
		i++
	}
	reportFrames(b, i)
}

func BenchmarkVerifierAdd(b *testing.B) {
	m := shipped(b)
	vecs := newSpeaker(m, 1, 0.5).vectors(nil, 4096)
	v, err := m.NewVerifier(enrolled(b, m))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		j := i % 4096
		_ = v.Add(vecs[j*m.Dim : (j+1)*m.Dim])
		i++
	}
	reportFrames(b, i)
}

// BenchmarkObservePCM is the per-hop cost of the PCM statistics (energy,
// clipping, pitch). Half the hops voiced, either alternating (every voiced
// hop then follows an unvoiced one: the pitch tracker's worst case) or in
// runs as in speech (0.4 s voiced, 0.4 s not).
func BenchmarkObservePCM(b *testing.B) {
	for _, bc := range []struct {
		name   string
		voiced func(i int) bool
	}{
		{"alternating", func(i int) bool { return i&1 == 0 }},
		{"runs", func(i int) bool { return i%80 < 40 }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m := shipped(b)
			e := m.NewEnroller()
			hop := hops(1, 1, 3000)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				e.ObservePCM(hop, bc.voiced(i))
				i++
			}
			reportFrames(b, i)
		})
	}
}

// BenchmarkAuthenticity is the end-of-collection cost (once per call) for
// 60 s of voice.
func BenchmarkAuthenticity(b *testing.B) {
	m := shipped(b)
	e := m.NewEnroller()
	_ = e.AddVectors(newSpeaker(m, 1, 0.5).vectors(nil, 6000))
	b.ReportAllocs()
	for b.Loop() {
		_ = e.Authenticity()
	}
}

func BenchmarkSealOpen(b *testing.B) {
	m := shipped(b)
	s, _ := NewSealer(testKey)
	tp := enrolled(b, m)
	b.ReportAllocs()
	for b.Loop() {
		c, _ := s.Seal("tenant", tp)
		if _, err := s.Open("tenant", m, c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFeaturesAndEnroller is the per-hop cost of the two stages
// after the VAD: features.Extractor.Append of one voiced 10 ms hop and the
// Enroller's ObservePCM and AddVectors of what it emits.
func BenchmarkFeaturesAndEnroller(b *testing.B) {
	m := shipped(b)
	ext, err := features.New(m.Features)
	if err != nil {
		b.Fatal(err)
	}
	pcm := hops(9, 1000, 2000)
	e := m.NewEnroller()
	vecs := make([]float32, 0, 4*m.Dim)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		hop := pcm[(i%1000)*80 : (i%1000+1)*80]
		e.ObservePCM(hop, true)
		vecs, _, _ = ext.Append(vecs[:0], hop, true)
		_ = e.AddVectors(vecs)
		i++
	}
	reportFrames(b, i)
}
