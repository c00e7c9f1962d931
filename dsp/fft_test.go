package dsp

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// naiveDFT is the textbook O(n²) transform of real x, bins 0..n/2.
func naiveDFT(x []float64) (re, im []float64) {
	n := len(x)
	re = make([]float64, n/2+1)
	im = make([]float64, n/2+1)
	for k := range re {
		for t, v := range x {
			a := -2 * math.Pi * float64(k*t%n) / float64(n)
			re[k] += v * math.Cos(a)
			im[k] += v * math.Sin(a)
		}
	}
	return re, im
}

func TestRealFFT(t *testing.T) {
	tone := func(n int, bin float64, amp float64) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = amp * math.Cos(2*math.Pi*bin*float64(i)/float64(n)+0.3)
		}
		return x
	}
	random := func(n int, seed uint64) []float64 {
		r := rand.New(rand.NewPCG(seed, 7))
		x := make([]float64, n)
		for i := range x {
			x[i] = r.Float64()*2 - 1
		}
		return x
	}
	impulse := func(n, at int) []float64 {
		x := make([]float64, n)
		x[at] = 1
		return x
	}
	cases := []struct {
		name string
		x    []float64
	}{
		{"random-8", random(8, 1)},
		{"random-16", random(16, 2)},
		{"random-32", random(32, 5)},
		{"random-64", random(64, 6)},
		{"random-128", random(128, 7)},
		{"random-1024", random(1024, 8)},
		{"random-256", random(256, 3)},
		{"random-512", random(512, 4)},
		{"tone-256-bin10", tone(256, 10, 1000)},
		{"tone-256-bin31.5", tone(256, 31.5, 1)},
		{"tone-512-bin100", tone(512, 100, 30000)},
		{"dc-256", tone(256, 0, 5)},
		{"nyquist-256", tone(256, 128, 2)},
		{"impulse-256-at-3", impulse(256, 3)},
		{"impulse-512-at-0", impulse(512, 0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := len(c.x)
			f := NewRealFFT(n)
			wantRe, wantIm := naiveDFT(c.x)
			gotRe := make([]float64, n/2+1)
			gotIm := make([]float64, n/2+1)
			f.Spectrum(gotRe, gotIm, c.x)
			pow := make([]float64, n/2+1)
			f.Power(pow, c.x)
			scale := 0.0
			for _, v := range c.x {
				scale += math.Abs(v)
			}
			tol := 1e-12 * scale * float64(n)
			for k := range wantRe {
				if math.Abs(gotRe[k]-wantRe[k]) > tol || math.Abs(gotIm[k]-wantIm[k]) > tol {
					t.Fatalf("bin %d: got %g%+gi, want %g%+gi", k, gotRe[k], gotIm[k], wantRe[k], wantIm[k])
				}
				wp := wantRe[k]*wantRe[k] + wantIm[k]*wantIm[k]
				if math.Abs(pow[k]-wp) > 2*tol*scale+1e-9 {
					t.Fatalf("power bin %d: got %g, want %g", k, pow[k], wp)
				}
			}
		})
	}
}

func TestRealFFTLengthPanics(t *testing.T) {
	for _, n := range []int{0, 4, 6, 100} {
		t.Run("", func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatalf("NewRealFFT(%d) did not panic", n)
				}
			}()
			NewRealFFT(n)
		})
	}
}

func BenchmarkRealFFT(b *testing.B) {
	for _, n := range []int{256, 512} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			f := NewRealFFT(n)
			x := make([]float64, n)
			r := rand.New(rand.NewPCG(1, 2))
			for i := range x {
				x[i] = r.Float64()
			}
			p := make([]float64, n/2+1)
			b.ReportAllocs()
			for b.Loop() {
				f.Power(p, x)
			}
		})
	}
}

// TestRealFFTInput: filling the packed input by hand, as a caller that
// windows while it loads does, gives Power's result bit for bit, and
// PowerFrom leaves the bins it is not asked for alone.
func TestRealFFTInput(t *testing.T) {
	for _, n := range []int{8, 16, 128, 256, 512} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(n), 3))
			x := make([]float64, n)
			for i := range x {
				x[i] = r.Float64()*2 - 1
			}
			f := NewRealFFT(n)
			want := make([]float64, n/2+1)
			f.Power(want, x)

			perm, re, im := f.Input()
			for j, p := range perm {
				re[p], im[p] = x[2*j], x[2*j+1]
			}
			f.Transform()
			got := make([]float64, n/2+1)
			f.PowerFrom(got, 1)
			for k := range want {
				if got[k] != want[k] {
					t.Fatalf("bin %d: %v by Input, %v by Power", k, got[k], want[k])
				}
			}

			const from, sentinel = 3, -1.0
			for k := range got {
				got[k] = sentinel
			}
			f.Power(want, x) // the same input again
			for j, p := range perm {
				re[p], im[p] = x[2*j], x[2*j+1]
			}
			f.Transform()
			f.PowerFrom(got, from)
			for k := range got {
				skipped := k != 0 && k != n/2 && (k < from || k > n/2-from)
				if skipped && got[k] != sentinel || !skipped && got[k] != want[k] {
					t.Fatalf("PowerFrom(%d): bin %d = %v (Power %v)", from, k, got[k], want[k])
				}
			}
		})
	}
}
