package voiceprint

import (
	"math"
	"testing"
)

// harmonic appends n hops of a voiced sound at f0 Hz: harmonics 2 to 8
// (the telephone band holds no fundamental) with falling amplitudes.
func harmonic(dst []int16, f0 float64, n int, phase *float64) []int16 {
	for range n * 80 {
		var v float64
		for h := 2; h <= 8; h++ {
			v += math.Sin(float64(h)**phase) / float64(h)
		}
		dst = append(dst, int16(4000*v))
		*phase += 2 * math.Pi * f0 / 8000
	}
	return dst
}

// harmonicCollection feeds an enroller 1,000 voiced hops (10 s) of a
// harmonic sound whose fundamental in hop i is f0(i) Hz, with the vectors
// of one synthetic speaker, and returns its authenticity.
func harmonicCollection(t *testing.T, m Model, f0 func(i int) float64) Authenticity {
	t.Helper()
	e := m.NewEnroller()
	spk := newSpeaker(m, 9, 0.5)
	var phase float64
	for i := 0; i < 1000; i++ {
		e.ObservePCM(harmonic(nil, f0(i), 1, &phase), true)
		if err := e.Add(spk.vectors(nil, 1)); err != nil {
			t.Fatal(err)
		}
	}
	return e.Authenticity()
}

func TestPitchShift(t *testing.T) {
	m := shipped(t)
	cases := []struct {
		name     string
		f0a, f0b float64
		lo, hi   float64 // expected PitchShift range, semitones
	}{
		{"one pitch", 140, 140, 0, 0.5},
		{"a fifth up", 120, 180, 12*math.Log2(1.5) - 0.5, 12*math.Log2(1.5) + 0.5},
		{"an octave down", 300, 150, 11.5, 12.5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := harmonicCollection(t, m, func(i int) float64 {
				if i >= 500 {
					return tc.f0b
				}
				return tc.f0a
			})
			if a.PitchShift < tc.lo || a.PitchShift > tc.hi {
				t.Errorf("PitchShift %.2f, want %.2f to %.2f", a.PitchShift, tc.lo, tc.hi)
			}
		})
	}
	// Noise has no pitch: nothing to compare.
	e := m.NewEnroller()
	spk := newSpeaker(m, 9, 0.5)
	pcm := hops(5, 1000, 3000)
	for i := 0; i < 1000; i++ {
		e.ObservePCM(pcm[i*80:(i+1)*80], true)
		_ = e.Add(spk.vectors(nil, 1))
	}
	if a := e.Authenticity(); a.PitchShift != 0 {
		t.Errorf("noise: PitchShift %.2f, want 0", a.PitchShift)
	}
}

// TestPitchShiftZ checks that a pitch difference across the collection is
// measured in the voice's own pitch spread: the same 3-semitone step is
// small for a voice whose pitch wanders by several semitones (intonation)
// and large for a monotone one.
func TestPitchShiftZ(t *testing.T) {
	m := shipped(t)
	cases := []struct {
		name       string
		wander     float64 // semitones, peak, of a slow intonation contour
		minZ, maxZ float64
	}{
		{"monotone", 0, 3, 1e9},
		{"lively", 5, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := harmonicCollection(t, m, func(i int) float64 {
				st := tc.wander * math.Sin(2*math.Pi*float64(i)/37)
				if i >= 500 {
					st += 3
				}
				return 140 * math.Pow(2, st/12)
			})
			t.Logf("PitchShift %.2f semitones, PitchShiftZ %.2f", a.PitchShift, a.PitchShiftZ)
			if a.PitchShift < 2 {
				t.Errorf("PitchShift %.2f semitones, want the 3-semitone step", a.PitchShift)
			}
			if a.PitchShiftZ < tc.minZ || a.PitchShiftZ > tc.maxZ {
				t.Errorf("PitchShiftZ %.2f, want %.1f to %.1f", a.PitchShiftZ, tc.minZ, tc.maxZ)
			}
		})
	}
}

// TestPitchHalfReuse checks the pitch tracker's correlations, whose first
// half is carried over from the previous voiced hop, against the
// definition computed afresh, on voiced runs broken by unvoiced hops.
func TestPitchHalfReuse(t *testing.T) {
	m := shipped(t)
	var phase float64
	cases := []struct {
		name    string
		pcm     []int16
		voiced  func(h int) bool
		minHits int // hops whose correlations were checked
	}{
		{"harmonic, all voiced", harmonic(nil, 140, 60, &phase), func(int) bool { return true }, 50},
		{"harmonic, every fifth hop unvoiced", harmonic(nil, 210, 60, &phase), func(h int) bool { return h%5 != 4 }, 40},
		{"noise, alternating", hops(7, 60, 3000), func(h int) bool { return h%2 == 0 }, 25},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &m.NewEnroller().c
			hits := 0
			for h := 0; h+80 <= len(tc.pcm); h += 80 {
				before := c.pvoice
				c.pitch(tc.pcm[h:h+80], tc.voiced(h/80))
				if c.pvoice == before || c.pfill < 4 {
					continue
				}
				x := c.pbuf[pitchStart:]
				var e0, e1 float64
				for _, v := range x[:pitchWin] {
					e0 += float64(v) * float64(v)
				}
				if e0 < 1 {
					continue
				}
				hits++
				for l := pitchMinLag; l <= pitchMaxLag; l++ {
					var r float64
					e1 = 0
					for i := range pitchWin {
						r += float64(x[i]) * float64(x[l+i])
						e1 += float64(x[l+i]) * float64(x[l+i])
					}
					want := r / math.Sqrt(e0*e1)
					if got := float64(c.pr[l]); math.Abs(got-want) > 1e-4 {
						t.Fatalf("hop %d lag %d: correlation %.6f, want %.6f", h/80, l, got, want)
					}
				}
			}
			if hits < tc.minHits {
				t.Errorf("%d hops checked, want at least %d", hits, tc.minHits)
			}
		})
	}
}
