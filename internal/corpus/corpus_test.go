package corpus

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestVoiced(t *testing.T) {
	cases := []struct {
		name string
		segs [][2]float64
		n    int
		want []bool
	}{
		{"none", nil, 400, []bool{false, false, false, false, false}},
		{"middle hops", [][2]float64{{0.011, 0.03}}, 400, []bool{false, true, true, false, false}},
		{"two segments", [][2]float64{{0, 0.01}, {0.04, 0.05}}, 400, []bool{true, false, false, false, true}},
		{"partial hop dropped", [][2]float64{{0, 1}}, 250, []bool{true, true, true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Voiced(tc.segs, tc.n); !slices.Equal(got, tc.want) {
				t.Errorf("Voiced = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestLoad: the utterances come in the manifest's order (eval.Load sorts
// them by speaker), with the split and the ground truth.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("speakers.csv", "speaker,base_voice\na,kal\nb,slt\n")
	write("manifest.csv", "wav,split,speaker,utterance,source,condition,segments\n"+
		"wav/b/u0.wav,train,b,b_u0,synthetic,gappy,0.5-1.0\n"+
		"wav/a/u0.wav,train,a,a_u0,synthetic,clean,0.10-1.00;1.20-1.80\n")
	us, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 2 || us[0].Utterance != "b_u0" || us[0].BaseVoice != "slt" || us[1].BaseVoice != "kal" ||
		us[1].Split != "train" || !slices.Equal(us[1].Segments, [][2]float64{{0.1, 1}, {1.2, 1.8}}) ||
		math.Abs(us[1].SpeechS-1.5) > 1e-9 || us[1].Dir != dir {
		t.Fatalf("Load = %+v", us)
	}
	for _, tc := range []struct{ name, manifest string }{
		{"malformed segment", "wav,split,speaker,utterance,condition,segments\nx.wav,train,a,a_u0,clean,0.1:0.2\n"},
		{"speaker without base voice", "wav,split,speaker,utterance,condition,segments\nx.wav,train,c,c_u0,clean,\n"},
		{"no wav", "ulaw,split,speaker,utterance,condition,segments\nx.ulaw,train,a,a_u0,clean,\n"},
	} {
		write("manifest.csv", tc.manifest)
		if _, err := Load(dir); err == nil {
			t.Errorf("%s: loaded", tc.name)
		}
	}
}
