package features

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestFilterbank(t *testing.T) {
	cases := []struct {
		name      string
		nf, rate  int
		low, high float64
	}{
		{"8k telephone 24", 24, 8000, 300, 3400},
		{"16k telephone 24", 24, 16000, 300, 3400},
		{"8k full 23", 23, 8000, 20, 4000},
		{"16k wide 40", 40, 16000, 100, 7600},
		{"8k few 4", 4, 8000, 300, 3400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nfft := c.rate / 8000 * 256
			fb, err := newFilterbank(c.nf, nfft, c.rate, c.low, c.high)
			if err != nil {
				t.Fatal(err)
			}
			bins := nfft/2 + 1
			w := fb.weights(bins)
			binHz := float64(c.rate) / float64(nfft)
			ml, mh := melOf(c.low), melOf(c.high)
			centre := func(i int) float64 { return ml + (mh-ml)*float64(i+1)/float64(c.nf+1) }
			for k := 0; k < bins; k++ {
				hz := float64(k) * binHz
				m := melOf(hz)
				sum := 0.0
				for i := range w {
					sum += w[i][k]
					if w[i][k] < 0 || w[i][k] > 1 {
						t.Fatalf("filter %d bin %d weight %g outside [0,1]", i, k, w[i][k])
					}
					// The triangle formula, independently.
					l, cm, r := centre(i-1), centre(i), centre(i+1)
					want := math.Max(0, math.Min((m-l)/(cm-l), (r-m)/(r-cm)))
					if math.Abs(w[i][k]-want) > 1e-12 {
						t.Fatalf("filter %d bin %d (%.1f Hz): weight %g, want %g", i, k, hz, w[i][k], want)
					}
				}
				// Edges: nothing at or outside the band.
				if (hz <= c.low || hz >= c.high) && sum != 0 {
					t.Fatalf("bin %d (%.1f Hz) outside the band has weight %g", k, hz, sum)
				}
				// Between the first and last peaks, neighbouring triangles add up to 1.
				if m >= centre(0) && m <= centre(c.nf-1) && math.Abs(sum-1) > 1e-12 {
					t.Fatalf("bin %d (%.1f Hz): weights sum to %g, want 1", k, hz, sum)
				}
			}
			// apply agrees with the dense weights.
			r := rand.New(rand.NewPCG(uint64(c.nf), 3))
			p := make([]float64, bins)
			for k := range p {
				p[k] = r.Float64() * 1e6
			}
			got := make([]float64, c.nf)
			fb.apply(got, p)
			for i := range w {
				want := 0.0
				for k, x := range w[i] {
					want += x * p[k]
				}
				if math.Abs(got[i]-want) > 1e-9*want {
					t.Fatalf("filter %d: apply %g, dense %g", i, got[i], want)
				}
			}
		})
	}
}

func TestFilterbankTooNarrow(t *testing.T) {
	if _, err := newFilterbank(64, 256, 8000, 300, 600); err != ErrBand {
		t.Fatalf("64 filters over 300 Hz: %v, want ErrBand", err)
	}
}

func TestDCT(t *testing.T) {
	cases := []struct{ nc, nf int }{{20, 24}, {13, 23}, {2, 4}, {40, 40}, {5, 7}}
	r := rand.New(rand.NewPCG(5, 5))
	for _, c := range cases {
		t.Run(strconv.Itoa(c.nc)+"x"+strconv.Itoa(c.nf), func(t *testing.T) {
			d := newDCT(c.nc, c.nf)
			x := make([]float64, c.nf)
			for i := range x {
				x[i] = r.NormFloat64() * 5
			}
			got := make([]float64, c.nc-1)
			d.apply(got, x)
			for j := 1; j < c.nc; j++ {
				want := 0.0
				for i, v := range x {
					want += v * math.Cos(math.Pi/float64(c.nf)*(float64(i)+0.5)*float64(j))
				}
				want *= math.Sqrt(2 / float64(c.nf))
				if math.Abs(got[j-1]-want) > 1e-12 {
					t.Fatalf("c%d = %g, want %g", j, got[j-1], want)
				}
			}
			// A constant spectrum has no cepstrum past c0.
			for i := range x {
				x[i] = 7
			}
			d.apply(got, x)
			for j, v := range got {
				if math.Abs(v) > 1e-12 {
					t.Fatalf("constant input: c%d = %g", j+1, v)
				}
			}
			// The DCT is orthonormal: its own basis row j0 comes back as c[j0] = 1.
			j0 := c.nc - 1
			for i := range x {
				x[i] = math.Sqrt(2/float64(c.nf)) * math.Cos(math.Pi*float64(j0)*(float64(i)+0.5)/float64(c.nf))
			}
			d.apply(got, x)
			for j, v := range got {
				want := 0.0
				if j+1 == j0 {
					want = 1
				}
				if math.Abs(v-want) > 1e-12 {
					t.Fatalf("basis %d: c%d = %g, want %g", j0, j+1, v, want)
				}
			}
		})
	}
}

// TestTonePeak checks that a pure tone puts the most energy in the filter
// whose peak is nearest to it on the mel scale, at both rates.
func TestTonePeak(t *testing.T) {
	cases := []struct {
		rate int
		hz   float64
	}{
		{8000, 350}, {8000, 500}, {8000, 1000}, {8000, 1234}, {8000, 2000}, {8000, 3300},
		{16000, 440}, {16000, 1500}, {16000, 3000},
	}
	for _, c := range cases {
		t.Run(strconv.Itoa(c.rate)+"/"+strconv.Itoa(int(c.hz)), func(t *testing.T) {
			e, err := New(Options{SampleRate: c.rate})
			if err != nil {
				t.Fatal(err)
			}
			pcm := make([]int16, 5*e.HopSize())
			for i := range pcm {
				pcm[i] = int16(math.Round(10000 * math.Sin(2*math.Pi*c.hz*float64(i)/float64(c.rate))))
			}
			if _, _, err := e.Append(nil, pcm, true); err != nil {
				t.Fatal(err)
			}
			// e.mel holds the log filter energies of the last frame.
			best := 0
			for i, v := range e.mel {
				if v > e.mel[best] {
					best = i
				}
			}
			ml, mh := melOf(300), melOf(3400)
			near, dist := 0, math.Inf(1)
			for i := range e.mel {
				d := math.Abs(ml + (mh-ml)*float64(i+1)/25 - melOf(c.hz))
				if d < dist {
					near, dist = i, d
				}
			}
			if best != near {
				t.Fatalf("tone at %.0f Hz peaks in filter %d, want %d", c.hz, best, near)
			}
			// And far filters are well below the peak (> 30 dB, ln 1000 ≈ 6.9).
			for i, v := range e.mel {
				if (i < best-3 || i > best+3) && e.mel[best]-v < 6.9 {
					t.Fatalf("filter %d only %.1f below the peak", i, e.mel[best]-v)
				}
			}
		})
	}
}
