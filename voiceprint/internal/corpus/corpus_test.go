package corpus

import (
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

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("speakers.csv", "speaker,base_voice\na,kal\nb,slt\n")
	write("manifest.csv", "wav,split,speaker,utterance,source,condition,speech_s,segments,clipped\n"+
		"wav/a/u0.wav,train,a,a_u0,synthetic,clean,1.5,0.10-1.00;1.20-1.80,0\n"+
		"wav/b/u0.wav,train,b,b_u0,synthetic,gappy,0.5,0.5-1.0,1\n")
	us, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 2 || us[0].BaseVoice != "kal" || us[1].BaseVoice != "slt" || !us[1].Clipped ||
		!slices.Equal(us[0].Segments, [][2]float64{{0.1, 1}, {1.2, 1.8}}) || us[0].SpeechS != 1.5 {
		t.Fatalf("Load = %+v", us)
	}
	write("manifest.csv", "wav,split,speaker,utterance,segments\nx.wav,train,a,a_u0,0.1:0.2\n")
	if _, err := Load(dir); err == nil {
		t.Error("a malformed segment loaded")
	}
	write("manifest.csv", "wav,split,speaker,utterance,segments\nx.wav,train,c,c_u0,\n")
	if _, err := Load(dir); err == nil {
		t.Error("a speaker without base voice loaded")
	}
}
