package features

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// runAll pushes pcm through e in chunks of chunkHops hops (1 if 0) with the
// voice decision of each hop, then flushes. Consecutive hops are grouped
// into one Append only while their decisions agree.
func runAll(t testing.TB, e *Extractor, pcm []int16, voiced []bool, chunkHops int) []float32 {
	t.Helper()
	if chunkHops < 1 {
		chunkHops = 1
	}
	hop := e.HopSize()
	var out []float32
	total := 0
	for h := 0; h < len(voiced); {
		n := 1
		for n < chunkHops && h+n < len(voiced) && voiced[h+n] == voiced[h] {
			n++
		}
		var got int
		var err error
		before := len(out)
		out, got, err = e.Append(out, pcm[h*hop:(h+n)*hop], voiced[h])
		if err != nil {
			t.Fatalf("Append: %v", err)
		}
		if len(out)-before != got*e.Dim() {
			t.Fatalf("Append reported %d vectors, appended %d values", got, len(out)-before)
		}
		total += got
		h += n
	}
	before := len(out)
	out, got := e.Flush(out)
	if len(out)-before != got*e.Dim() {
		t.Fatalf("Flush reported %d vectors, appended %d values", got, len(out)-before)
	}
	limit := deltaDelay
	if e.norm == NormCentred {
		limit += e.sliding.ahead
	}
	if got > limit {
		t.Fatalf("Flush emitted %d vectors, more than the delay %d", got, limit)
	}
	return out
}

func checkFinite(t testing.TB, v []float32) {
	t.Helper()
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			t.Fatalf("value %d is %v", i, x)
		}
	}
}

func TestMatchesReference(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		ref  refConfig
	}{
		{"8k-default", Options{}, defaultRef(8000)},
		{"16k-default", Options{SampleRate: 16000}, defaultRef(16000)},
		{"8k-centred-window-30", Options{NormWindow: 30}, func() refConfig { c := defaultRef(8000); c.window = 30; return c }()},
		{"8k-centred-window-31-variance", Options{NormWindow: 31, NormVariance: true},
			func() refConfig { c := defaultRef(8000); c.window, c.variance = 31, true; return c }()},
		{"8k-trailing", Options{Norm: NormTrailing}, func() refConfig { c := defaultRef(8000); c.norm = NormTrailing; return c }()},
		{"8k-raw", Options{Norm: NormOff}, func() refConfig { c := defaultRef(8000); c.norm = NormOff; return c }()},
		{"8k-13cep-trailing-window50-variance", Options{NumCepstra: 13, Norm: NormTrailing, NormWindow: 50, NormVariance: true},
			func() refConfig {
				c := defaultRef(8000)
				c.nc, c.norm, c.window, c.variance = 13, NormTrailing, 50, true
				return c
			}()},
		{"16k-wideband-40filters", Options{SampleRate: 16000, NumFilters: 40, LowHz: 100, HighHz: 7600, NormWindow: 20},
			refConfig{rate: 16000, nc: 20, nf: 40, low: 100, high: 7600, window: 20}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := New(c.opts)
			if err != nil {
				t.Fatal(err)
			}
			pcm, voiced := fixture(c.ref.rate)
			got := runAll(t, e, pcm, voiced, 1)
			want := reference(c.ref, pcm, voiced)
			if len(got) != len(want)*e.Dim() {
				t.Fatalf("got %d values, want %d vectors of %d", len(got), len(want), e.Dim())
			}
			worst := 0.0
			for i, w := range want {
				for j, x := range w {
					d := math.Abs(float64(got[i*e.Dim()+j]) - x)
					worst = max(worst, d)
					if d > 1e-5*(1+math.Abs(x)) {
						t.Fatalf("vector %d coefficient %d: got %g, want %g", i, j, got[i*e.Dim()+j], x)
					}
				}
			}
			t.Logf("%d vectors, worst absolute difference %.2g", len(want), worst)
		})
	}
}

func TestVectorCounts(t *testing.T) {
	cases := []struct {
		name     string
		hops     int
		voiced   func(h int) bool
		appended int // vectors from Append
		flushed  int // vectors from Flush
	}{
		{"empty", 0, func(int) bool { return true }, 0, 0},
		{"two hops, no frame yet", 2, func(int) bool { return true }, 0, 0},
		{"three hops, one frame held back", 3, func(int) bool { return true }, 0, 1},
		{"seven hops, 5 frames", 7, func(int) bool { return true }, 1, 4},
		{"one second voiced", 100, func(int) bool { return true }, 94, 4},
		{"one second unvoiced", 100, func(int) bool { return false }, 0, 0},
		// Frame k is voiced when hop k+1 is: hops 10..19 voiced give frames 9..18.
		{"hops 10-19 voiced", 100, func(h int) bool { return h >= 10 && h < 20 }, 10, 0},
		{"last hop voiced only", 50, func(h int) bool { return h == 49 }, 0, 0},
		{"second last hop voiced only", 50, func(h int) bool { return h == 48 }, 0, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Trailing normalisation: the delta context is the only delay.
			e, err := New(Options{Norm: NormTrailing})
			if err != nil {
				t.Fatal(err)
			}
			pcm, _ := synth(8000, 3, []segment{{float64(c.hops) / 100, true, 150}})
			var out []float32
			got := 0
			for h := 0; h < c.hops; h++ {
				var n int
				out, n, err = e.Append(out, pcm[h*80:(h+1)*80], c.voiced(h))
				if err != nil {
					t.Fatal(err)
				}
				got += n
			}
			if got != c.appended {
				t.Errorf("Append gave %d vectors, want %d", got, c.appended)
			}
			out, n := e.Flush(out)
			if n != c.flushed {
				t.Errorf("Flush gave %d vectors, want %d", n, c.flushed)
			}
			if len(out) != (c.appended+c.flushed)*e.Dim() {
				t.Errorf("%d values for %d vectors", len(out), c.appended+c.flushed)
			}
			checkFinite(t, out)
		})
	}
}

func TestStreamingEquivalence(t *testing.T) {
	for _, rate := range []int{8000, 16000} {
		pcm, voiced := fixture(rate)
		e, err := New(Options{SampleRate: rate})
		if err != nil {
			t.Fatal(err)
		}
		want := runAll(t, e, pcm, voiced, 1)
		for _, chunk := range []int{2, 3, 7, 50, 1000} {
			t.Run(strconv.Itoa(rate)+"/chunk-"+strconv.Itoa(chunk), func(t *testing.T) {
				e, err := New(Options{SampleRate: rate})
				if err != nil {
					t.Fatal(err)
				}
				got := runAll(t, e, pcm, voiced, chunk)
				if len(got) != len(want) {
					t.Fatalf("got %d values, want %d", len(got), len(want))
				}
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("value %d: %v after chunking, %v hop by hop", i, got[i], want[i])
					}
				}
			})
		}
		t.Run(strconv.Itoa(rate)+"/reset", func(t *testing.T) {
			// After Reset, a used extractor gives what a new one gives.
			e.Reset()
			got := runAll(t, e, pcm, voiced, 4)
			if len(got) != len(want) {
				t.Fatalf("got %d values, want %d", len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("value %d: %v after Reset, %v new", i, got[i], want[i])
				}
			}
		})
	}
}

func TestFlushStartsSegment(t *testing.T) {
	// With normalisation off, two segments separated by Flush give what
	// two new extractors give; with the sliding window, the second
	// segment is normalised with the first one's frames still in the window.
	pcm, voiced := fixture(8000)
	half := len(voiced) / 2
	a, va := pcm[:half*80], voiced[:half]
	b, vb := pcm[half*80:], voiced[half:]
	for _, norm := range []Norm{NormOff, NormCentred, NormTrailing} {
		t.Run([]string{"centred", "trailing", "off"}[norm], func(t *testing.T) {
			e, _ := New(Options{Norm: norm})
			got := runAll(t, e, a, va, 1)
			got = append(got, runAll(t, e, b, vb, 1)...)
			e1, _ := New(Options{Norm: norm})
			e2, _ := New(Options{Norm: norm})
			want := append(runAll(t, e1, a, va, 1), runAll(t, e2, b, vb, 1)...)
			if len(got) != len(want) {
				t.Fatalf("got %d values, want %d", len(got), len(want))
			}
			same := true
			for i := range got {
				same = same && got[i] == want[i]
			}
			if same != (norm == NormOff) {
				t.Fatalf("segments equal to fresh extractors: %v, want %v", same, norm == NormOff)
			}
		})
	}
}

func TestSilence(t *testing.T) {
	cases := []struct {
		name string
		opts Options
	}{
		{"8k-raw", Options{Norm: NormOff}},
		{"8k-centred", Options{}},
		{"8k-trailing", Options{Norm: NormTrailing}},
		{"8k-variance", Options{NormVariance: true}},
		{"16k-variance", Options{SampleRate: 16000, NormVariance: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := New(c.opts)
			if err != nil {
				t.Fatal(err)
			}
			pcm := make([]int16, 50*e.HopSize())
			out, n, err := e.Append(nil, pcm, true)
			if err != nil {
				t.Fatal(err)
			}
			out, m := e.Flush(out)
			if n+m != 48 {
				t.Fatalf("%d vectors, want 48", n+m)
			}
			checkFinite(t, out)
			for f := 0; f < n+m; f++ {
				v := out[f*e.Dim() : (f+1)*e.Dim()]
				for i, x := range v {
					want := float32(0)
					if i == 0 && c.opts.Norm == NormOff {
						want = float32(math.Log(powerFloor))
					}
					if math.Abs(float64(x-want)) > 1e-5 {
						t.Fatalf("vector %d coefficient %d = %v, want %v", f, i, x, want)
					}
				}
			}
		})
	}
}

// inputCases are test signals, each made of 30 hops at 8 kHz: the
// extreme ones of TestExtremeInput and ordinary ones; FuzzExtractor is
// seeded from them.
func inputCases() []struct {
	name string
	gen  func(i int) int16
} {
	return []struct {
		name string
		gen  func(i int) int16
	}{
		{"full-scale square", func(i int) int16 {
			if i/20%2 == 0 {
				return 32767
			}
			return -32768
		}},
		{"alternating ±32768", func(i int) int16 { return int16(-32768 + 65535*(i%2)) }},
		{"constant max", func(int) int16 { return 32767 }},
		{"single click", func(i int) int16 {
			if i == 400 {
				return -32768
			}
			return 0
		}},
		{"digital silence", func(int) int16 { return 0 }},
		{"two tones", func(i int) int16 {
			return int16(8000*math.Sin(float64(i)/3) + 3000*math.Sin(float64(i)*1.9))
		}},
		{"pseudo-random", func(i int) int16 { return int16(i * 7919) }},
	}
}

func TestExtremeInput(t *testing.T) {
	// Full-scale square waves, clipping, clicks: finite output, bounded.
	cases := inputCases()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, opts := range []Options{{Norm: NormOff}, {NormVariance: true}} {
				e, err := New(opts)
				if err != nil {
					t.Fatal(err)
				}
				pcm := make([]int16, 30*80)
				for i := range pcm {
					pcm[i] = c.gen(i)
				}
				out, _, err := e.Append(nil, pcm, true)
				if err != nil {
					t.Fatal(err)
				}
				out, _ = e.Flush(out)
				checkFinite(t, out)
				for i, x := range out {
					if math.Abs(float64(x)) > 1000 {
						t.Fatalf("value %d = %v", i, x)
					}
				}
			}
		})
	}
}

func TestOptions(t *testing.T) {
	cases := []struct {
		name    string
		opts    Options
		err     error
		dim     int
		hopSize int
	}{
		{"zero value", Options{}, nil, 60, 80},
		{"16k", Options{SampleRate: 16000}, nil, 60, 160},
		{"13 cepstra", Options{NumCepstra: 13}, nil, 39, 80},
		{"44.1k", Options{SampleRate: 44100}, ErrSampleRate, 0, 0},
		{"negative rate", Options{SampleRate: -8000}, ErrSampleRate, 0, 0},
		{"3 filters", Options{NumFilters: 3, NumCepstra: 2}, ErrNumFilters, 0, 0},
		{"65 filters", Options{NumFilters: 65}, ErrNumFilters, 0, 0},
		{"1 cepstrum", Options{NumCepstra: 1}, ErrNumCepstra, 0, 0},
		{"more cepstra than filters", Options{NumFilters: 16, NumCepstra: 17}, ErrNumCepstra, 0, 0},
		{"band above Nyquist", Options{HighHz: 4001}, ErrBand, 0, 0},
		{"band inverted", Options{LowHz: 3000, HighHz: 2000}, ErrBand, 0, 0},
		{"negative low", Options{LowHz: -1}, ErrBand, 0, 0},
		{"NaN band", Options{HighHz: math.NaN()}, ErrBand, 0, 0},
		{"filters narrower than a bin", Options{NumFilters: 64, NumCepstra: 20, LowHz: 300, HighHz: 600}, ErrBand, 0, 0},
		{"negative window", Options{NormWindow: -1}, ErrNorm, 0, 0},
		{"window of 1", Options{NormWindow: 1}, ErrNorm, 0, 0},
		{"negative norm", Options{Norm: -1}, ErrNorm, 0, 0},
		{"window too long", Options{NormWindow: 30001}, ErrNorm, 0, 0},
		{"longest window", Options{NormWindow: 30000}, nil, 60, 80},
		{"unknown norm", Options{Norm: 7}, ErrNorm, 0, 0},
		{"full band 16k", Options{SampleRate: 16000, LowHz: 20, HighHz: 8000, NumFilters: 40}, nil, 60, 160},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := New(c.opts)
			if !errors.Is(err, c.err) {
				t.Fatalf("New: %v, want %v", err, c.err)
			}
			if err != nil {
				return
			}
			if e.Dim() != c.dim || e.HopSize() != c.hopSize {
				t.Fatalf("Dim %d HopSize %d, want %d %d", e.Dim(), e.HopSize(), c.dim, c.hopSize)
			}
		})
	}
}

func TestHopLength(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	dst := []float32{1, 2}
	for _, n := range []int{1, 79, 81, 159} {
		out, got, err := e.Append(dst, make([]int16, n), true)
		if !errors.Is(err, ErrHopLength) || got != 0 || len(out) != 2 {
			t.Fatalf("len %d: (%d values, %d, %v), want dst unchanged and ErrHopLength", n, len(out), got, err)
		}
	}
	// Nothing was consumed: 3 good hops still make exactly the first frame.
	out, _, err := e.Append(nil, make([]int16, 240), true)
	if err != nil || len(out) != 0 {
		t.Fatalf("Append: %d values, %v", len(out), err)
	}
	if out, n := e.Flush(nil); n != 1 || len(out) != e.Dim() {
		t.Fatalf("Flush gave %d vectors, want 1", n)
	}
}

func TestAppendAllocs(t *testing.T) {
	for _, rate := range []int{8000, 16000} {
		t.Run(strconv.Itoa(rate), func(t *testing.T) {
			for _, opts := range []Options{
				{SampleRate: rate}, {SampleRate: rate, NormVariance: true},
				{SampleRate: rate, Norm: NormTrailing}, {SampleRate: rate, Norm: NormOff},
			} {
				e, err := New(opts)
				if err != nil {
					t.Fatal(err)
				}
				pcm, _ := synth(rate, 9, []segment{{0.5, true, 140}})
				hop := e.HopSize()
				dst := make([]float32, 0, (4+150)*e.Dim())
				h := 0
				voiced := false
				step := func() {
					dst, _, _ = e.Append(dst[:0], pcm[h*hop:(h+1)*hop], voiced)
					h = (h + 1) % (len(pcm) / hop)
					voiced = h%5 != 0
				}
				for range 20 {
					step()
				}
				if a := testing.AllocsPerRun(500, step); a != 0 {
					t.Fatalf("Append allocates %v times per hop", a)
				}
				if a := testing.AllocsPerRun(50, func() {
					for range 7 {
						step()
					}
					dst, _ = e.Flush(dst[:0])
				}); a != 0 {
					t.Fatalf("Flush allocates %v times", a)
				}
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	pcm, voiced := fixture(8000)
	r := rand.New(rand.NewPCG(4, 4))
	for i := range pcm {
		pcm[i] += int16(r.IntN(3) - 1)
	}
	e1, _ := New(Options{})
	e2, _ := New(Options{})
	a := runAll(t, e1, pcm, voiced, 1)
	b := runAll(t, e2, pcm, voiced, 5)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("value %d differs between runs: %v, %v", i, a[i], b[i])
		}
	}
}

// TestVoicingPatterns checks the lazy computation of statics (only near
// voiced frames) against the reference, which computes every frame, for
// voicing patterns that switch often and leave isolated voiced hops.
func TestVoicingPatterns(t *testing.T) {
	pcm, _ := fixture(8000)
	hops := len(pcm) / 80
	r := rand.New(rand.NewPCG(11, 12))
	cases := []struct {
		name   string
		voiced func(h int) bool
	}{
		{"sparse random", func(int) bool { return r.Float64() < 0.08 }},
		{"half random", func(int) bool { return r.Float64() < 0.5 }},
		{"dense random", func(int) bool { return r.Float64() < 0.92 }},
		{"alternating", func(h int) bool { return h%2 == 0 }},
		{"every 9th", func(h int) bool { return h%9 == 4 }},
		{"every 10th", func(h int) bool { return h%10 == 0 }},
		{"runs of 3 every 13", func(h int) bool { return h%13 < 3 }},
		{"first hops", func(h int) bool { return h < 4 }},
		{"hop 1 only", func(h int) bool { return h == 1 }},
		{"last hops", func(h int) bool { return h >= hops-3 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			voiced := make([]bool, hops)
			for h := range voiced {
				voiced[h] = c.voiced(h)
			}
			for _, norm := range []Norm{NormOff, NormCentred, NormTrailing} {
				e, err := New(Options{Norm: norm, NormWindow: 40})
				if err != nil {
					t.Fatal(err)
				}
				got := runAll(t, e, pcm, voiced, 3)
				ref := defaultRef(8000)
				ref.norm, ref.window = norm, 40
				want := reference(ref, pcm, voiced)
				if len(got) != len(want)*e.Dim() {
					t.Fatalf("got %d values, want %d vectors", len(got), len(want))
				}
				for i, w := range want {
					for j, x := range w {
						if d := math.Abs(float64(got[i*e.Dim()+j]) - x); d > 1e-5*(1+math.Abs(x)) {
							t.Fatalf("norm %d vector %d coefficient %d: got %g, want %g", norm, i, j, got[i*e.Dim()+j], x)
						}
					}
				}
			}
		})
	}
}
