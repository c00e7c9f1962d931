package vad

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// frameF1 scores decisions against truth, frame by frame.
func frameF1(pred, truth []bool) score {
	var s score
	for i, p := range pred {
		s.add(p, truth[i])
	}
	return s
}

// voicedIn counts the voiced decisions in frames [from, to).
func voicedIn(pred []bool, from, to int) int {
	n := 0
	for _, v := range pred[from:min(to, len(pred))] {
		if v {
			n++
		}
	}
	return n
}

func decideRate(t *testing.T, rate int, pcm []int16) []bool {
	t.Helper()
	d, err := New(Options{SampleRate: rate})
	if err != nil {
		t.Fatal(err)
	}
	fs := d.FrameSize()
	var out []bool
	for f := 0; f+fs <= len(pcm); f += fs {
		v, err := d.Process(pcm[f : f+fs])
		if err != nil {
			t.Fatal(err)
		}
		if f/fs >= d.Delay() {
			out = append(out, v)
		}
	}
	return d.Flush(out)
}

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		rate, frame int
		err         error
	}{
		{0, 80, nil}, {8000, 80, nil}, {16000, 160, nil},
		{11025, 0, ErrSampleRate}, {44100, 0, ErrSampleRate}, {-8000, 0, ErrSampleRate},
	} {
		d, err := New(Options{SampleRate: tc.rate})
		if !errors.Is(err, tc.err) {
			t.Errorf("rate %d: err %v, want %v", tc.rate, err, tc.err)
			continue
		}
		if err == nil && d.FrameSize() != tc.frame {
			t.Errorf("rate %d: frame size %d, want %d", tc.rate, d.FrameSize(), tc.frame)
		}
	}
}

func TestFrameSizeError(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rate       int
		frame, ref int // lengths; ref < 0: Process
	}{
		{"8k short", 8000, 79, -1}, {"8k long", 8000, 160, -1}, {"8k empty", 8000, 0, -1},
		{"16k given 8k frame", 16000, 80, -1},
		{"ref shorter", 8000, 80, 40}, {"ref longer", 8000, 80, 160}, {"frame wrong with ref", 16000, 80, 80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := New(Options{SampleRate: tc.rate})
			if err != nil {
				t.Fatal(err)
			}
			frame := make([]int16, tc.frame)
			if tc.ref < 0 {
				_, err = d.Process(frame)
			} else {
				_, err = d.ProcessWithReference(frame, make([]int16, tc.ref))
			}
			if err != ErrFrameSize {
				t.Fatalf("err %v, want ErrFrameSize", err)
			}
			if d.seen != 0 || d.Frames() != 0 {
				t.Fatalf("a rejected frame changed the state")
			}
		})
	}
}

func TestSignals(t *testing.T) {
	silence := func(sec float64) []int16 { return make([]int16, int(sec*8000)) }
	noise := func(db float64) []int16 {
		return toPCM(whiteNoise(rand.New(rand.NewPCG(3, 3)), 5*8000, db))
	}
	bursts := [][2]float64{{0.5, 1.6}, {2.4, 3.2}, {3.8, 4.6}}
	for _, tc := range []struct {
		name string
		pcm  []int16
		// nil truth: expect at most maxVoiced voiced frames; else expect
		// frame F1 of at least minF1.
		truth     []bool
		maxVoiced int
		minF1     float64
	}{
		{name: "digital silence", pcm: silence(5)},
		{name: "tone 1 kHz -20 dBFS", pcm: toPCM(tone(5*8000, 8000, 1000, -20))},
		{name: "tone 300 Hz -10 dBFS", pcm: toPCM(tone(5*8000, 8000, 300, -10))},
		{name: "white noise -70 dBFS", pcm: noise(-70)},
		{name: "white noise -50 dBFS", pcm: noise(-50)},
		{name: "white noise -30 dBFS", pcm: noise(-30)},
		{name: "white noise -10 dBFS", pcm: noise(-10)},
		{name: "voice -25 dBFS in silence", minF1: 0.98},
		{name: "voice -25 dBFS, noise -50 dBFS", minF1: 0.95},
		{name: "voice -25 dBFS, noise -42 dBFS", minF1: 0.95},
		{name: "voice -10 dBFS, noise -30 dBFS", minF1: 0.95},
		{name: "voice -45 dBFS, noise -65 dBFS", minF1: 0.95},
		{name: "voice from the first frame", minF1: 0.95},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pcm, truth := tc.pcm, tc.truth
			if pcm == nil {
				var voiceDB, noiseDB float64 = -25, -300
				b := bursts
				switch tc.name {
				case "voice -25 dBFS, noise -50 dBFS":
					noiseDB = -50
				case "voice -25 dBFS, noise -42 dBFS":
					noiseDB = -42
				case "voice -10 dBFS, noise -30 dBFS":
					voiceDB, noiseDB = -10, -30
				case "voice -45 dBFS, noise -65 dBFS":
					voiceDB, noiseDB = -45, -65
				case "voice from the first frame":
					noiseDB = -50
					b = [][2]float64{{0, 1.6}, {2.4, 3.2}}
				}
				pcm, truth = burstSignal(11, 8000, 5, noiseDB, voiceDB, b)
			}
			pred := decideAll(t, pcm, nil)
			if truth == nil {
				if n := voicedIn(pred, 0, len(pred)); n > tc.maxVoiced {
					t.Fatalf("%d voiced frames, want at most %d", n, tc.maxVoiced)
				}
				return
			}
			s := frameF1(pred, truth)
			t.Logf("F1 %.3f (P %.3f R %.3f)", s.f1(), s.precision(), s.recall())
			if s.f1() < tc.minF1 {
				t.Fatalf("F1 %.3f (P %.3f R %.3f), want ≥ %.2f", s.f1(), s.precision(), s.recall(), tc.minF1)
			}
		})
	}
}

// TestLevelStep: the background jumps by 30 dB; the detector must learn the
// new level within 3 s and then find a voice burst above it.
func TestLevelStep(t *testing.T) {
	quiet, _ := burstSignal(21, 8000, 10, -60, 0, nil)
	loud, truth := burstSignal(22, 8000, 10, -30, -12, [][2]float64{{7, 8.5}})
	pcm := append(quiet[:2*8000:2*8000], loud[2*8000:]...)
	pred := decideAll(t, pcm, nil)
	if n := voicedIn(pred, 500, 700); n > 0 {
		t.Errorf("%d voiced frames from 5 s to 7 s, 3 s after the step", n)
	}
	if n := voicedIn(pred, 0, 190); n > 0 {
		t.Errorf("%d voiced frames before the step", n)
	}
	s := frameF1(pred[600:], truth[600:])
	if s.recall() < 0.95 {
		t.Errorf("voice after the step: recall %.3f", s.recall())
	}
}

func TestSampleRate16k(t *testing.T) {
	b := [][2]float64{{0.5, 1.6}, {2.4, 3.2}}
	pcm16, truth := burstSignal(31, 16000, 4, -50, -25, b)
	pred := decideRate(t, 16000, pcm16)
	if len(pred) != len(truth) {
		t.Fatalf("%d decisions for %d frames", len(pred), len(truth))
	}
	if s := frameF1(pred, truth); s.f1() < 0.95 {
		t.Errorf("16 kHz: F1 %.3f", s.f1())
	}
	// Energy above 4 kHz alone is out of band: a 6 kHz tone burst in
	// silence is not voice.
	x := make([]float64, 4*16000)
	mix(x, 16000, tone(16000, 16000, 6000, -10))
	if n := voicedIn(decideRate(t, 16000, toPCM(x)), 0, 400); n > 0 {
		t.Errorf("6 kHz tone at 16 kHz: %d voiced frames", n)
	}
}

// echoCall builds a caller leg that carries its own speech and a −30 dB,
// 60 ms echo of the agent leg, 18 dB above the caller's noise floor.
func echoCall() (caller, agent []int16, truth []bool) {
	agent, _ = burstSignal(5, 8000, 12, -65, -20, [][2]float64{{0.5, 3}, {6, 9}})
	own, truth := burstSignal(6, 8000, 12, -68, -28, [][2]float64{{3.5, 5}, {9.5, 11}})
	x := make([]float64, len(own))
	for i := range x {
		x[i] = float64(own[i])
		if i >= 480 {
			x[i] += 0.0316 * float64(agent[i-480])
		}
	}
	return toPCM(x), agent, truth
}

func TestEchoReference(t *testing.T) {
	caller, agent, truth := echoCall()
	with := frameF1(decideAll(t, caller, agent), truth)
	without := frameF1(decideAll(t, caller, nil), truth)
	if with.f1() < 0.95 {
		t.Errorf("with reference: F1 %.3f (P %.3f R %.3f)", with.f1(), with.precision(), with.recall())
	}
	// The echo is well above the noise: without the reference it is taken
	// for voice, which is what the reference is for.
	if without.precision() > 0.8 {
		t.Errorf("without reference: precision %.3f, expected the echo to count as voice", without.precision())
	}
	// A silent reference changes nothing.
	pcm, tr := burstSignal(7, 8000, 5, -60, -25, [][2]float64{{1, 3}})
	a := decideAll(t, pcm, nil)
	b := decideAll(t, pcm, make([]int16, len(pcm)))
	if !slices.Equal(a, b) {
		t.Errorf("silent reference changed %d decisions", len(a)-countEqual(a, b))
	}
	if s := frameF1(b, tr); s.f1() < 0.95 {
		t.Errorf("silent reference: F1 %.3f", s.f1())
	}
}

func countEqual(a, b []bool) int {
	n := 0
	for i := range a {
		if a[i] == b[i] {
			n++
		}
	}
	return n
}

func TestDeterministic(t *testing.T) {
	caller, agent, _ := echoCall()
	a := decideAll(t, caller, agent)
	b := decideAll(t, caller, agent)
	if !slices.Equal(a, b) {
		t.Fatal("two runs over the same input differ")
	}
	// Reset gives the same decisions again, on the same Detector.
	d, _ := New(Options{})
	run := func() []bool {
		var out []bool
		for f := 0; f+80 <= len(caller); f += 80 {
			v, _ := d.ProcessWithReference(caller[f:f+80], agent[f:f+80])
			out = append(out, v)
		}
		return d.Flush(out)
	}
	first := run()
	d.Reset()
	if !slices.Equal(first, run()) {
		t.Fatal("decisions after Reset differ")
	}
}

func TestCounters(t *testing.T) {
	pcm, _ := burstSignal(41, 8000, 3, -50, -25, [][2]float64{{1, 2}})
	d, _ := New(Options{})
	if d.VoicedPercentage() != 0 || d.Frames() != 0 {
		t.Fatal("counters not zero after New")
	}
	n := len(pcm) / 80
	voiced := 0
	for f := 0; f < n; f++ {
		v, err := d.Process(pcm[f*80 : (f+1)*80])
		if err != nil {
			t.Fatal(err)
		}
		if f < d.Delay() && v {
			t.Fatalf("frame %d: a decision inside the delay", f)
		}
		if v {
			voiced++
		}
	}
	if got, want := d.Frames(), n-d.Delay(); got != want {
		t.Fatalf("Frames %d, want %d", got, want)
	}
	rest := d.Flush(nil)
	if len(rest) != d.Delay() {
		t.Fatalf("Flush returned %d decisions, want %d", len(rest), d.Delay())
	}
	for _, v := range rest {
		if v {
			voiced++
		}
	}
	if d.Frames() != n || d.Voiced() != voiced {
		t.Fatalf("Frames %d Voiced %d, want %d and %d", d.Frames(), d.Voiced(), n, voiced)
	}
	if p := d.VoicedPercentage(); p < 30 || p > 40 {
		t.Fatalf("VoicedPercentage %.1f, want about 33", p)
	}
	if len(d.Flush(nil)) != 0 {
		t.Fatal("second Flush returned decisions")
	}
	d.Reset()
	if d.Frames() != 0 || d.Voiced() != 0 {
		t.Fatal("Reset kept the counters")
	}
	// Flush before Delay() frames returns exactly the frames processed.
	for f := 0; f < 5; f++ {
		d.Process(pcm[f*80 : (f+1)*80])
	}
	if got := len(d.Flush(nil)); got != 5 {
		t.Fatalf("Flush after 5 frames returned %d decisions", got)
	}
}

func TestZeroAllocs(t *testing.T) {
	for _, tc := range []struct {
		rate int
		ref  bool
	}{{8000, false}, {16000, false}, {8000, true}, {16000, true}} {
		d, _ := New(Options{SampleRate: tc.rate})
		sig := benchSignal(tc.rate, 2)
		fs := d.FrameSize()
		f := 0
		allocs := testing.AllocsPerRun(500, func() {
			fr := sig[f*fs : (f+1)*fs]
			if tc.ref {
				d.ProcessWithReference(fr, fr)
			} else {
				d.Process(fr)
			}
			f = (f + 1) % (len(sig) / fs)
		})
		if allocs != 0 {
			t.Errorf("rate %d ref %v: %.1f allocations per frame", tc.rate, tc.ref, allocs)
		}
	}
}

// TestPauses: pauses shorter than the joining distance are voiced, longer
// ones are not, and a segment ends within 100 ms of the voice.
func TestPauses(t *testing.T) {
	pcm, _ := burstSignal(51, 8000, 6, -55, -25, [][2]float64{{0.5, 1.5}, {1.75, 2.5}, {3.5, 4.5}})
	pred := decideAll(t, pcm, nil)
	if n := voicedIn(pred, 150, 175); n != 25 {
		t.Errorf("250 ms pause: %d of 25 frames voiced, want all", n)
	}
	if n := voicedIn(pred, 260, 340); n != 0 {
		t.Errorf("1 s pause: %d frames voiced inside it", n)
	}
	if n := voicedIn(pred, 460, 600); n != 0 {
		t.Errorf("%d frames voiced 100 ms or more after the end", n)
	}
}

// upsample2 doubles the sample rate of x with a windowed-sinc interpolator
// (the band above 4 kHz stays empty).
func upsample2(x []int16) []int16 {
	const half = 24
	out := make([]int16, 2*len(x))
	for i := range out {
		if i%2 == 0 {
			out[i] = x[i/2]
			continue
		}
		// Value halfway between x[i/2] and x[i/2+1].
		s := 0.0
		for k := -half + 1; k <= half; k++ {
			j := i/2 + k
			if j < 0 || j >= len(x) {
				continue
			}
			tt := float64(k) - 0.5 // distance in input samples
			w := 0.5 + 0.5*math.Cos(math.Pi*tt/half)
			s += float64(x[j]) * math.Sin(math.Pi*tt) / (math.Pi * tt) * w
		}
		out[i] = int16(max(-32768, min(32767, math.Round(s))))
	}
	return out
}

// TestSampleRatesAgree runs the corpus fixture at 8 kHz and, upsampled, at
// 16 kHz: the decisions must nearly agree.
func TestSampleRatesAgree(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "gappy_gsm_brown.ulaw"))
	if err != nil {
		t.Fatal(err)
	}
	pcm := decodeULaw(b)
	a := decideRate(t, 8000, pcm)
	c := decideRate(t, 16000, upsample2(pcm))
	if len(a) != len(c) {
		t.Fatalf("%d and %d decisions", len(a), len(c))
	}
	if same := countEqual(a, c); same < len(a)*97/100 {
		t.Errorf("8 and 16 kHz agree on %d of %d frames", same, len(a))
	}
}

// TestMixedReference: frames given to Process in a stream that had a
// reference count as having a silent reference; the stream goes on.
func TestMixedReference(t *testing.T) {
	caller, agent, truth := echoCall()
	d, _ := New(Options{})
	var pred []bool
	n := len(caller) / 80
	for f := 0; f < n; f++ {
		fr := caller[f*80 : (f+1)*80]
		var v bool
		var err error
		if f%100 < 50 {
			v, err = d.ProcessWithReference(fr, agent[f*80:(f+1)*80])
		} else {
			v, err = d.Process(fr)
		}
		if err != nil {
			t.Fatal(err)
		}
		if f >= d.Delay() {
			pred = append(pred, v)
		}
	}
	pred = d.Flush(pred)
	if len(pred) != n || d.Frames() != n {
		t.Fatalf("%d decisions, Frames %d, for %d frames", len(pred), d.Frames(), n)
	}
	// The caller's own voice is still found.
	if s := frameF1(pred, truth); s.recall() < 0.95 {
		t.Errorf("recall %.3f", s.recall())
	}
}
