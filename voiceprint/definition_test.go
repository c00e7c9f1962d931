package voiceprint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"testing"
)

func shippedBytes(t testing.TB) []byte {
	t.Helper()
	b, err := modelFiles.ReadFile("models/telephone-gmm64.bin")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	ms := r.Models()
	if len(ms) != 1 {
		t.Fatalf("%d models, want 1", len(ms))
	}
	m := ms[0]
	sum := sha256.Sum256(shippedBytes(t))
	if m.Hash != hex.EncodeToString(sum[:]) {
		t.Errorf("hash %s is not the SHA-256 of the model file", m.Hash)
	}
	if m.Name != "telephone-gmm64" || m.Description == "" || m.Dim != 39 {
		t.Errorf("model %q, dim %d, description %q", m.Name, m.Dim, m.Description)
	}
	if !(m.DefaultSimilarityThreshold > 0 && m.DefaultSimilarityThreshold < 1) || m.MinVoiceSeconds != 3 {
		t.Errorf("threshold %v, minimum voice %v", m.DefaultSimilarityThreshold, m.MinVoiceSeconds)
	}
	if got, ok := r.Lookup(m.Hash); !ok || got.Hash != m.Hash {
		t.Error("Lookup of the model's own hash failed")
	}
	other := "0"
	if m.Hash[0] == '0' {
		other = "1"
	}
	if _, ok := r.Lookup(other + m.Hash[1:]); ok {
		t.Error("Lookup of an unknown hash succeeded")
	}
	ms[0].Name = "changed"
	if r.Models()[0].Name == "changed" {
		t.Error("Models returned the registry's own slice")
	}
}

func TestDefinitionRoundTrip(t *testing.T) {
	data := shippedBytes(t)
	var d Definition
	if err := d.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	again, err := d.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Error("MarshalBinary(UnmarshalBinary(file)) differs from the file")
	}
}

func TestDefinitionInvalid(t *testing.T) {
	base := func() *Definition {
		var d Definition
		if err := d.UnmarshalBinary(shippedBytes(t)); err != nil {
			t.Fatal(err)
		}
		return &d
	}
	cases := []struct {
		name string
		edit func(*Definition)
	}{
		{"no components", func(d *Definition) { d.Components = 0 }},
		{"short means", func(d *Definition) { d.Means = d.Means[1:] }},
		{"zero variance", func(d *Definition) { d.Variances[3] = 0 }},
		{"NaN mean", func(d *Definition) { d.Means[3] = float32(math.NaN()) }},
		{"negative weight", func(d *Definition) { d.Weights[0] = -1 }},
		{"shortlist too long", func(d *Definition) { d.Shortlist = maxShortlist + 1 }},
		{"preselect beyond dim", func(d *Definition) { d.Preselect = d.Dim + 1 }},
		{"threshold above 1", func(d *Definition) { d.Threshold = 1.5 }},
		{"no relevance", func(d *Definition) { d.Relevance = 0 }},
		{"features of another size", func(d *Definition) { d.Features.NumCepstra = 20 }},
		{"nuisance rank without rows", func(d *Definition) { d.NuisanceRank++ }},
		{"infinite calibration", func(d *Definition) { d.CalibScale = math.Inf(1) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := base()
			tc.edit(d)
			if _, err := d.MarshalBinary(); !errors.Is(err, ErrModelFormat) {
				t.Errorf("MarshalBinary: %v, want ErrModelFormat", err)
			}
		})
	}
	data := shippedBytes(t)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"magic only", data[:8]},
		{"header cut", data[:40]},
		{"arrays cut", data[:len(data)-1]},
		{"trailing byte", append(append([]byte(nil), data...), 0)},
		{"bad magic", append([]byte("XVPMODL1"), data[8:]...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseModel(tc.data); !errors.Is(err, ErrModelFormat) {
				t.Errorf("ParseModel: %v, want ErrModelFormat", err)
			}
		})
	}
}

func FuzzParseModel(f *testing.F) {
	data := shippedBytes(f)
	f.Add(data[:300])
	f.Add(data[:8])
	f.Add([]byte("EVPMODL1\x02\x00\x00\x00{}"))
	f.Add([]byte(`EVPMODL1` + "\x40\x00\x00\x00" + `{"components":1,"dim":39,"preselect":1,"shortlist":1,"nuisance_rank":0}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseModel(b)
		if err != nil {
			if !errors.Is(err, ErrModelFormat) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		e := m.NewEnroller()
		_ = e.Add(make([]float32, m.Dim))
	})
}
