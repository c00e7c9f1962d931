package voiceprint

import (
	"errors"
	"math"
	"testing"
)

func TestVerifySeparatesSpeakers(t *testing.T) {
	m := shipped(t)
	for seed := uint64(1); seed <= 4; seed++ {
		a, b := newSpeaker(m, seed, 0.5), newSpeaker(m, seed+100, 0.5)
		e := m.NewEnroller()
		if err := e.AddVectors(a.vectors(nil, 1000)); err != nil {
			t.Fatal(err)
		}
		tp, err := e.Template()
		if err != nil {
			t.Fatal(err)
		}
		v, err := m.NewVerifier(tp)
		if err != nil {
			t.Fatal(err)
		}
		score := func(s *speaker) Result {
			v.Reset()
			if err := v.AddVectors(s.vectors(nil, 400)); err != nil {
				t.Fatal(err)
			}
			return v.Result()
		}
		same, other := score(a), score(b)
		if !(same.Raw > other.Raw) || !(same.Score > other.Score) {
			t.Errorf("seed %d: same speaker raw %.3f score %.3f, other raw %.3f score %.3f", seed, same.Raw, same.Score, other.Raw, other.Score)
		}
		for _, r := range []Result{same, other} {
			if !(r.Score >= 0 && r.Score <= 1) {
				t.Errorf("score %v outside [0, 1]", r.Score)
			}
		}
	}
}

func TestEnrollerErrors(t *testing.T) {
	m := shipped(t)
	e := m.NewEnroller()
	if err := e.Add(make([]float32, m.Dim-1)); !errors.Is(err, ErrDim) {
		t.Errorf("Add of a short vector: %v, want ErrDim", err)
	}
	if err := e.AddVectors(make([]float32, m.Dim+1)); !errors.Is(err, ErrDim) {
		t.Errorf("AddVectors of a ragged buffer: %v, want ErrDim", err)
	}
	bad := make([]float32, m.Dim)
	for _, x := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		bad[5] = x
		if err := e.Add(bad); !errors.Is(err, ErrNonFinite) {
			t.Errorf("Add of a vector holding %v: %v, want ErrNonFinite", x, err)
		}
		if err := e.AddVectors(append(newSpeaker(m, 1, 0.5).vectors(nil, 1), bad...)); !errors.Is(err, ErrNonFinite) {
			t.Errorf("AddVectors with a vector holding %v: %v, want ErrNonFinite", x, err)
		}
	}
	if e.VoiceSeconds() != 0.03 {
		t.Errorf("rejected vectors counted: %v s", e.VoiceSeconds())
	}
	e.Reset()
	if err := e.AddVectors(newSpeaker(m, 1, 0.5).vectors(nil, 299)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Template(); !errors.Is(err, ErrNotEnoughVoice) {
		t.Errorf("Template of 2.99 s: %v, want ErrNotEnoughVoice", err)
	}
	if err := e.Add(newSpeaker(m, 1, 0.5).vectors(nil, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Template(); err != nil {
		t.Errorf("Template of 3 s: %v", err)
	}
	v, err := m.NewVerifier(enrolled(t, m))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Add(nil); !errors.Is(err, ErrDim) {
		t.Errorf("Verifier.Add(nil): %v, want ErrDim", err)
	}
	if r := v.Result(); r.Score != 0 || r.Raw != 0 || r.Authenticity.Score != 0 {
		t.Errorf("result without voice: %+v", r)
	}
}

// TestSegmentsKeepTotals checks that packing and merging the time segments
// (binary16 storage) keeps the collection's statistics: the template of a
// long enrolment equals, to quantisation, one made from statistics summed
// directly in float32.
func TestSegmentsKeepTotals(t *testing.T) {
	m := shipped(t)
	g := m.c.g
	for _, n := range []int{100, 101, 1200, 1201, 2100, 6000} {
		vecs := newSpeaker(m, 7, 0.5).vectors(nil, n)
		e := m.NewEnroller()
		if err := e.AddVectors(vecs); err != nil {
			t.Fatal(err)
		}
		got := e.Supervector(nil)
		ref := newStats(g)
		f := g.newFrame()
		for i := 0; i < len(vecs); i += g.d {
			g.eval(vecs[i:i+g.d], &f)
			ref.add(g, vecs[i:i+g.d], &f)
		}
		want := make([]float32, g.k*g.d)
		g.offsets(want, &ref)
		var worst float64
		for i := range want {
			worst = math.Max(worst, math.Abs(float64(got[i]-want[i])))
		}
		if worst > 2e-3 {
			t.Errorf("%d frames: supervector differs by up to %.2g from direct accumulation", n, worst)
		}
		if e.VoiceSeconds() != float64(n)/100 {
			t.Errorf("%d frames: VoiceSeconds %v", n, e.VoiceSeconds())
		}
	}
}

func TestResetForgets(t *testing.T) {
	m := shipped(t)
	e := m.NewEnroller()
	e.ObservePCM(hops(1, 5, 32767), true)
	if err := e.AddVectors(newSpeaker(m, 2, 0.5).vectors(nil, 3000)); err != nil {
		t.Fatal(err)
	}
	e.Reset()
	vecs := newSpeaker(m, 3, 0.5).vectors(nil, 500)
	if err := e.AddVectors(vecs); err != nil {
		t.Fatal(err)
	}
	fresh := m.NewEnroller()
	if err := fresh.AddVectors(vecs); err != nil {
		t.Fatal(err)
	}
	a, b := e.Supervector(nil), fresh.Supervector(nil)
	if !slicesEqual(a, b) {
		t.Error("after Reset the enroller does not match a fresh one")
	}
	if au := e.Authenticity(); au.Clipping != 0 {
		t.Errorf("clipping %v survives Reset", au.Clipping)
	}
}

func TestAuthenticity(t *testing.T) {
	m := shipped(t)
	type input struct {
		vecs      []float32
		voicedRMS float64 // of the voiced hops
		noiseRMS  float64 // of as many unvoiced hops
		clipEvery int     // set every n-th voiced sample to full scale
	}
	a := func(n int) []float32 { return newSpeaker(m, 11, 0.6).vectors(nil, n) }
	b := func(n int) []float32 { return newSpeaker(m, 12, 0.6).vectors(nil, n) }
	loop := func(period, n int) []float32 {
		one := a(period)
		var out []float32
		for len(out) < n*m.Dim {
			out = append(out, one...)
		}
		return out[:n*m.Dim]
	}
	cases := []struct {
		name  string
		in    input
		pass  bool
		check func(t *testing.T, au Authenticity)
	}{
		{"one speaker", input{vecs: a(2000), voicedRMS: 3000, noiseRMS: 30}, true, func(t *testing.T, au Authenticity) {
			if au.Segments < 4 || au.Loop > 0.1 || au.SNRdB < 35 || au.VoiceSeconds != 20 {
				t.Errorf("%+v", au)
			}
		}},
		{"two speakers", input{vecs: append(a(1000), b(1000)...), voicedRMS: 3000, noiseRMS: 30}, false, func(t *testing.T, au Authenticity) {
			if au.Consistency > 0.3 {
				t.Errorf("consistency %v", au.Consistency)
			}
		}},
		{"loop", input{vecs: loop(300, 2000), voicedRMS: 3000, noiseRMS: 30}, false, func(t *testing.T, au Authenticity) {
			if au.Loop < 0.9 || math.Abs(au.LoopLagSeconds-3) > 0.011 {
				t.Errorf("loop %v at %v s", au.Loop, au.LoopLagSeconds)
			}
		}},
		{"noisy", input{vecs: a(2000), voicedRMS: 300, noiseRMS: 300}, false, func(t *testing.T, au Authenticity) {
			if au.SNRdB > 3 {
				t.Errorf("SNR %v dB", au.SNRdB)
			}
		}},
		{"clipped", input{vecs: a(2000), voicedRMS: 3000, noiseRMS: 30, clipEvery: 20}, false, func(t *testing.T, au Authenticity) {
			if math.Abs(au.Clipping-0.05) > 0.01 {
				t.Errorf("clipping %v", au.Clipping)
			}
		}},
		{"too short to compare", input{vecs: a(450), voicedRMS: 3000, noiseRMS: 30}, true, func(t *testing.T, au Authenticity) {
			if au.Segments != 5 || au.Consistency != 1 || au.PitchShift != 0 {
				t.Errorf("segments %d, consistency %v, pitch shift %v", au.Segments, au.Consistency, au.PitchShift)
			}
		}},
		{"nothing", input{}, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := m.NewEnroller()
			n := len(tc.in.vecs) / m.Dim
			voiced := hops(5, n, tc.in.voicedRMS)
			if tc.in.clipEvery > 0 {
				for i := 0; i < len(voiced); i += tc.in.clipEvery {
					voiced[i] = 32767
				}
			}
			noise := hops(6, n, tc.in.noiseRMS)
			for i := 0; i < n; i++ {
				e.ObservePCM(noise[80*i:80*i+80], false)
				e.ObservePCM(voiced[80*i:80*i+80], true)
				if err := e.Add(tc.in.vecs[i*m.Dim : (i+1)*m.Dim]); err != nil {
					t.Fatal(err)
				}
			}
			au := e.Authenticity()
			if (au.Score >= 0.8) != tc.pass || !(au.Score >= 0 && au.Score <= 1) {
				t.Errorf("score %.3f, want pass=%v: %+v", au.Score, tc.pass, au)
			}
			if tc.check != nil {
				tc.check(t, au)
			}
		})
	}
}

// TestConsistencyFindsChange checks that the consistency check finds a
// change of speaker wherever it falls, as long as each side holds 2.5 s of
// voice: the segment boundaries are 1 s apart.
func TestConsistencyFindsChange(t *testing.T) {
	m := shipped(t)
	a := newSpeaker(m, 11, 0.6)
	b := newSpeaker(m, 12, 0.6)
	cases := []struct {
		name   string
		na, nb int // frames of a, then of b
		segs   int
		lo, hi float64 // expected Consistency range
	}{
		{"one speaker", 1000, 0, 10, 0.4, 1},
		{"halves", 500, 500, 10, -1, 0.1},
		{"second speaker for the last 3 s", 700, 300, 10, -1, 0.1},
		{"first speaker for only the first 3 s", 300, 700, 10, -1, 0.1},
		{"too short to compare", 300, 180, 5, 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := m.NewEnroller()
			if err := e.AddVectors(append(a.vectors(nil, tc.na), b.vectors(nil, tc.nb)...)); err != nil {
				t.Fatal(err)
			}
			au := e.Authenticity()
			if au.Segments != tc.segs || au.Consistency < tc.lo || au.Consistency > tc.hi {
				t.Errorf("segments %d, consistency %.3f; want %d, %.1f to %.1f", au.Segments, au.Consistency, tc.segs, tc.lo, tc.hi)
			}
		})
	}
}

func TestPerFrameAllocs(t *testing.T) {
	m := shipped(t)
	vecs := newSpeaker(m, 1, 0.5).vectors(nil, 3000)
	pcm := hops(1, 1, 1000)
	e := m.NewEnroller()
	v, err := m.NewVerifier(enrolled(t, m))
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	next := func() []float32 {
		x := vecs[(i%3000)*m.Dim : (i%3000+1)*m.Dim]
		i++
		return x
	}
	cases := []struct {
		name string
		f    func()
	}{
		{"Enroller.Add", func() { _ = e.Add(next()) }},
		{"Enroller.ObservePCM", func() { e.ObservePCM(pcm, true) }},
		{"Verifier.Add", func() { _ = v.Add(next()) }},
		{"Verifier.ObservePCM", func() { v.ObservePCM(pcm, false) }},
		{"Verifier.Raw", func() { _ = v.Raw() }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// 2,600 runs cross segment packing and merging.
			if n := testing.AllocsPerRun(2600, tc.f); n != 0 {
				t.Errorf("%v allocations per call", n)
			}
		})
	}
}
