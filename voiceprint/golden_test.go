package voiceprint_test

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/earshot-voice/earshot/features"
	"github.com/earshot-voice/earshot/voiceprint"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.json")

// readFixture reads a little-endian 16-bit 8 kHz fixture from testdata.
func readFixture(name string) ([]int16, error) {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		return nil, err
	}
	pcm := make([]int16, len(b)/2)
	for i := range pcm {
		pcm[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return pcm, nil
}

func readPCM(t testing.TB, name string) []int16 {
	t.Helper()
	pcm, err := readFixture(name)
	if err != nil {
		t.Fatal(err)
	}
	return pcm
}

// collector is what Enroller and Verifier have in common.
type collector interface {
	ObservePCM(hop []int16, voiced bool)
	AddVectors(vecs []float32) error
}

// feedPCM feeds pcm, every hop voiced (the fixtures are cut to speech),
// hop by hop through a features.Extractor into c, as the live pipeline
// does: ObservePCM for each hop, AddVectors for what the extractor emits.
func feedPCM(m voiceprint.Model, pcm []int16, c collector) error {
	ext, err := features.New(m.Features)
	if err != nil {
		return err
	}
	hs := ext.HopSize()
	vecs := make([]float32, 0, 8*m.Dim)
	for i := 0; i+hs <= len(pcm); i += hs {
		c.ObservePCM(pcm[i:i+hs], true)
		if vecs, _, err = ext.Append(vecs[:0], pcm[i:i+hs], true); err != nil {
			return err
		}
		if err := c.AddVectors(vecs); err != nil {
			return err
		}
	}
	vecs, _ = ext.Flush(vecs[:0])
	return c.AddVectors(vecs)
}

func stream(t testing.TB, m voiceprint.Model, pcm []int16, c collector) {
	t.Helper()
	if err := feedPCM(m, pcm, c); err != nil {
		t.Fatal(err)
	}
}

type goldenScore struct {
	Test         string  `json:"test"`
	Raw          float64 `json:"raw"`
	Score        float64 `json:"score"`
	Consistency  float64 `json:"consistency"`
	SNRdB        float64 `json:"snr_db"`
	Loop         float64 `json:"loop"`
	VoiceSeconds float64 `json:"voice_seconds"`
}

type golden struct {
	Model        string        `json:"model"`
	EnrolSeconds float64       `json:"enrol_voice_seconds"`
	Scores       []goldenScore `json:"scores"`
}

// TestGolden enrols testdata/enrol_s01.s16 with the shipped model and
// scores testdata/test_s01.s16 (same speaker) and test_s06.s16 (another)
// against it; the numbers must match testdata/golden.json (go test
// -run Golden -update rewrites it after a deliberate model change).
func TestGolden(t *testing.T) {
	m := voiceprint.NewRegistry().Models()[0]
	e := m.NewEnroller()
	stream(t, m, readPCM(t, "enrol_s01.s16"), e)
	tp, err := e.Template()
	if err != nil {
		t.Fatal(err)
	}
	got := golden{Model: m.Hash, EnrolSeconds: tp.VoiceSeconds()}
	for _, name := range []string{"test_s01.s16", "test_s06.s16"} {
		v, err := m.NewVerifier(tp)
		if err != nil {
			t.Fatal(err)
		}
		stream(t, m, readPCM(t, name), v)
		r := v.Result()
		got.Scores = append(got.Scores, goldenScore{
			Test: name, Raw: r.Raw, Score: r.Score, Consistency: r.Authenticity.Consistency,
			SNRdB: r.Authenticity.SNRdB, Loop: r.Authenticity.Loop, VoiceSeconds: r.Authenticity.VoiceSeconds,
		})
	}
	path := filepath.Join("testdata", "golden.json")
	if *update {
		b, _ := json.MarshalIndent(got, "", "  ")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want golden
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if want.Model != got.Model || want.EnrolSeconds != got.EnrolSeconds || len(want.Scores) != len(got.Scores) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-4*math.Max(1, math.Abs(b)) }
	for i, w := range want.Scores {
		g := got.Scores[i]
		if g.Test != w.Test || !near(g.Raw, w.Raw) || !near(g.Score, w.Score) || !near(g.Consistency, w.Consistency) ||
			!near(g.SNRdB, w.SNRdB) || !near(g.Loop, w.Loop) || g.VoiceSeconds != w.VoiceSeconds {
			t.Errorf("%s: got %+v, want %+v", w.Test, g, w)
		}
	}
	if !(got.Scores[0].Score > got.Scores[1].Score) {
		t.Errorf("same speaker scores %.3f, other speaker %.3f", got.Scores[0].Score, got.Scores[1].Score)
	}
}
