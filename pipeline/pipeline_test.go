package pipeline

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/earshot-voice/earshot/codec"
	"github.com/earshot-voice/earshot/features"
	"github.com/earshot-voice/earshot/voiceprint"
)

// enrollerSink feeds a speaker model's Enroller as a register session
// does: every hop to ObservePCM, every voiced vector to AddVectors.
type enrollerSink struct {
	enr          *voiceprint.Enroller
	dim          int
	hops, voiced int
}

func (s *enrollerSink) Hop(pcm []int16, voiced bool) {
	s.hops++
	if voiced {
		s.voiced++
	}
	s.enr.ObservePCM(pcm, voiced)
}

func (s *enrollerSink) Features(vecs []float32, n int) {
	_ = s.enr.AddVectors(vecs[:n*s.dim])
}

// recordingSink keeps what a pipeline hands it.
type recordingSink struct {
	hops    int
	voiced  int
	vectors int
	sum     float64
}

func (s *recordingSink) Hop(pcm []int16, voiced bool) {
	s.hops++
	if voiced {
		s.voiced++
	}
}

func (s *recordingSink) Features(vecs []float32, n int) {
	s.vectors += n
	for _, v := range vecs {
		s.sum += float64(v)
	}
}

// speechLike is a deterministic voiced-like signal with pauses: a pulse
// train through a resonance, on for 600 ms, off for 400 ms.
func speechLike(seconds float64, rate int) []int16 {
	n := int(seconds * float64(rate))
	out := make([]int16, n)
	rng := rand.New(rand.NewPCG(1, 2))
	var y1, y2 float64
	r, theta := 0.97, 2*math.Pi*700/float64(rate)
	for i := range out {
		t := float64(i) / float64(rate)
		on := math.Mod(t, 1.0) < 0.6
		x := rng.NormFloat64() * 20 // background noise
		if on && i%(rate/120) == 0 {
			x += 6000
		}
		y := x + 2*r*math.Cos(theta)*y1 - r*r*y2
		y2, y1 = y1, y
		out[i] = int16(max(-32768, min(32767, y)))
	}
	return out
}

func mulawFrames(pcm []int16, sizes []int) [][]byte {
	enc := codec.AppendMuLawEncode(nil, pcm)
	var frames [][]byte
	for i, k := 0, 0; i < len(enc); k++ {
		n := min(sizes[k%len(sizes)], len(enc)-i)
		frames = append(frames, enc[i:i+n])
		i += n
	}
	return frames
}

// TestPipelineChunkingDoesNotMatter: whole hops are decoded leg by leg
// straight from a frame and the rest goes through the carry-over; the
// result must not depend on how the stream is cut into frames.
func TestPipelineChunkingDoesNotMatter(t *testing.T) {
	pcm := speechLike(4, 8000)
	stereo := make([]int16, 0, 2*len(pcm))
	for i, v := range pcm {
		stereo = append(stereo, v, pcm[(i+1234)%len(pcm)]/4) // an echo-like agent leg
	}
	mono := Options{Encoding: codec.MuLaw, SampleRate: 8000, Channels: 1, Reference: -1}
	both := Options{Encoding: codec.MuLaw, SampleRate: 8000, Channels: 2, Voice: 0, Reference: 1}
	tests := []struct {
		name    string
		opts    Options
		samples []int16
		whole   int // bytes of a 200 ms frame
		sizes   [][]int
	}{
		{"mono", mono, pcm, 1600, [][]int{{160}, {1}, {7, 333, 80, 1601}, {32000}}},
		{"stereo", both, stereo, 3200, [][]int{{2}, {14, 666, 160, 3202}}},
	}
	for _, tt := range tests {
		run := func(sizes []int) recordingSink {
			p, err := New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var s recordingSink
			p.SetSink(&s)
			for _, f := range mulawFrames(tt.samples, sizes) {
				if err := p.Write(f); err != nil {
					t.Fatal(err)
				}
			}
			p.Flush()
			return s
		}
		whole := run([]int{tt.whole})
		if whole.hops != 400 || whole.voiced == 0 || whole.voiced == whole.hops || whole.vectors == 0 {
			t.Errorf("%s: pipeline result %+v: want 400 hops, some but not all voiced, features", tt.name, whole)
		}
		for _, sizes := range tt.sizes {
			if got := run(sizes); got != whole {
				t.Errorf("%s: frames of %v: %+v, want %+v", tt.name, sizes, got, whole)
			}
		}
	}
}

// A frame that is not whole samples of every channel is refused before
// any of it is analysed.
func TestPipelinePartialFrame(t *testing.T) {
	p, err := New(Options{Encoding: codec.MuLaw, SampleRate: 8000, Channels: 2, Voice: 0, Reference: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(make([]byte, 3201)); !errors.Is(err, codec.ErrPartialFrame) {
		t.Fatalf("err = %v, want ErrPartialFrame", err)
	}
	if p.Hops() != 0 {
		t.Fatalf("%d hops analysed from a refused frame", p.Hops())
	}
}

func TestPipelineSinkFromNextHop(t *testing.T) {
	pcm := speechLike(3, 8000)
	p, _ := New(Options{Encoding: codec.MuLaw, SampleRate: 8000, Channels: 1, Reference: -1})
	frames := mulawFrames(pcm, []int{800}) // 100 ms each
	var s recordingSink
	for i, f := range frames {
		if i == 10 { // bind after 1 s
			p.SetSink(&s)
		}
		p.Write(f)
	}
	p.Flush()
	if s.hops != 200 {
		t.Fatalf("sink got %d hops, want the 200 written after binding", s.hops)
	}
}

// A live call's pipeline runs the VAD alone until a session binds; the
// features it then extracts match those of a pipeline that extracted all
// along, because the hops still in the VAD's delay line prime the
// extractor before the sink's first hop.
func TestPipelineVADOnlyUntilBound(t *testing.T) {
	pcm := speechLike(4, 8000)
	frames := mulawFrames(pcm, []int{1600}) // 200 ms each
	run := func(vadOnly bool) recordingSink {
		p, err := New(Options{Encoding: codec.MuLaw, SampleRate: 8000, Channels: 1, Reference: -1, VADOnly: vadOnly})
		if err != nil {
			t.Fatal(err)
		}
		if vadOnly && p.Dim() != 0 {
			t.Fatalf("VAD-only pipeline has features of dimension %d", p.Dim())
		}
		var s recordingSink
		for i, f := range frames {
			if i == 8 { // bind after 1.6 s
				if err := p.SetFeatures(features.Options{}); err != nil {
					t.Fatal(err)
				}
				p.SetSink(&s)
			}
			p.Write(f)
		}
		p.Flush()
		return s
	}
	lazy, eager := run(true), run(false)
	if lazy.vectors == 0 || lazy != eager {
		t.Fatalf("bound to a VAD-only pipeline: %+v; to one with features all along: %+v", lazy, eager)
	}
}

func TestPipelineStereoAndWideband(t *testing.T) {
	caller, agent := speechLike(2, 16000), make([]int16, 32000)
	inter := make([]int16, 0, 64000)
	for i := range caller {
		inter = append(inter, agent[i], caller[i]) // internal first, external second
	}
	p, err := New(Options{Encoding: codec.L16, SampleRate: 16000, Channels: 2, Voice: 1, Reference: 0})
	if err != nil {
		t.Fatal(err)
	}
	var s recordingSink
	p.SetSink(&s)
	raw := codec.AppendL16Encode(nil, inter)
	for i := 0; i < len(raw); i += 6400 {
		if err := p.Write(raw[i:min(i+6400, len(raw))]); err != nil {
			t.Fatal(err)
		}
	}
	p.Flush()
	if s.hops != 200 || s.voiced == 0 {
		t.Fatalf("16 kHz stereo: %+v, want 200 hops at 8 kHz with voice", s)
	}
}

func TestPipelineOptions(t *testing.T) {
	for _, o := range []Options{
		{Encoding: 0, SampleRate: 8000, Channels: 1, Reference: -1},
		{Encoding: codec.MuLaw, SampleRate: 44100, Channels: 1, Reference: -1},
		{Encoding: codec.MuLaw, SampleRate: 8000, Channels: 3, Reference: -1},
		{Encoding: codec.MuLaw, SampleRate: 8000, Channels: 1, Voice: 1, Reference: -1},
		{Encoding: codec.MuLaw, SampleRate: 8000, Channels: 2, Voice: 0, Reference: 0},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

func TestPipelineZeroAllocsPerFrame(t *testing.T) {
	p, _ := New(Options{Encoding: codec.MuLaw, SampleRate: 8000, Channels: 2, Voice: 0, Reference: 1})
	var s recordingSink
	p.SetSink(&s)
	pcm := speechLike(2, 8000)
	stereo := make([]int16, 0, 2*len(pcm))
	for _, v := range pcm {
		stereo = append(stereo, v, v/8)
	}
	frames := mulawFrames(stereo, []int{3200})
	for _, f := range frames { // warm up: buffers reach their size
		p.Write(f)
	}
	i := 0
	if a := testing.AllocsPerRun(200, func() { p.Write(frames[i%len(frames)]); i++ }); a != 0 {
		t.Fatalf("%v allocations per frame", a)
	}
}

// BenchmarkPipeline measures decode → VAD (with echo reference) → MFCC for
// 200 ms stereo µ-law frames, the live path without the speaker model.
func BenchmarkPipeline(b *testing.B) {
	p, _ := New(Options{Encoding: codec.MuLaw, SampleRate: 8000, Channels: 2, Voice: 0, Reference: 1})
	var s recordingSink
	p.SetSink(&s)
	pcm := speechLike(10, 8000)
	stereo := make([]int16, 0, 2*len(pcm))
	for _, v := range pcm {
		stereo = append(stereo, v, v/8)
	}
	frames := mulawFrames(stereo, []int{3200})
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		p.Write(frames[i%len(frames)])
		i++
	}
	audio := float64(b.N) * 0.2
	b.ReportMetric(audio/b.Elapsed().Seconds(), "x_realtime")
}

// BenchmarkPipelineWithModel measures the whole per-call pipeline of a
// register session on recorded speech: µ-law decode, VAD, MFCC with the
// model's options, and the speaker model's accumulation (enrolment), in
// 200 ms mono frames. The fixture is about 90 % voiced, so the model runs
// on most frames.
func BenchmarkPipelineWithModel(b *testing.B) {
	f, err := os.Open("../testdata/enrol-s01.wav")
	if err != nil {
		b.Fatal(err)
	}
	_, pcm, err := codec.ReadWAV(f, 1<<22)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	model := voiceprint.NewRegistry().Models()[0]
	p, err := New(Options{Encoding: codec.MuLaw, SampleRate: 8000, Channels: 1, Reference: -1, Features: model.Features})
	if err != nil {
		b.Fatal(err)
	}
	enr := &enrollerSink{enr: model.NewEnroller(), dim: model.Dim}
	p.SetSink(enr)
	frames := mulawFrames(pcm, []int{1600})
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if err := p.Write(frames[i%len(frames)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.N)*0.2/b.Elapsed().Seconds(), "x_realtime")
	b.ReportMetric(100*float64(enr.voiced)/float64(max(enr.hops, 1)), "voiced_%")
}
