package vad

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// formatDecisions writes one character per 10 ms frame, '1' voiced and '.'
// not, 100 frames (one second) per line.
func formatDecisions(d []bool) string {
	var b strings.Builder
	for i, v := range d {
		if v {
			b.WriteByte('1')
		} else {
			b.WriteByte('.')
		}
		if i%100 == 99 || i == len(d)-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestGolden pins the decisions on the fixtures cut from the dev corpus
// (see testdata/README.md). Run with -update after a deliberate change of
// the detector, and say why in the commit.
func TestGolden(t *testing.T) {
	mono, err := os.ReadFile(filepath.Join("testdata", "gappy_gsm_brown.ulaw"))
	if err != nil {
		t.Fatal(err)
	}
	stereo, err := os.ReadFile(filepath.Join("testdata", "call_echo.ulaw"))
	if err != nil {
		t.Fatal(err)
	}
	n := len(stereo) / 2
	caller, agent := make([]int16, n), make([]int16, n)
	pcm := decodeULaw(stereo)
	for i := 0; i < n; i++ {
		caller[i], agent[i] = pcm[2*i], pcm[2*i+1]
	}
	for _, tc := range []struct {
		golden   string
		pcm, ref []int16
		truth    [][2]float64 // from the corpus, for the log
	}{
		{"gappy_gsm_brown.golden", decodeULaw(mono), nil, [][2]float64{{0, 0.58}, {2.55, 3.20}}},
		{"call_echo_caller.golden", caller, agent, [][2]float64{{1.48, 1.93}}},
		{"call_echo_caller_noref.golden", caller, nil, [][2]float64{{1.48, 1.93}}},
		{"call_echo_agent.golden", agent, nil, [][2]float64{{0, 0.84}}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			pred := decideAll(t, tc.pcm, tc.ref)
			s := frameF1(pred, truthFrames(len(pred), tc.truth))
			t.Logf("against the corpus truth: P %.3f R %.3f F1 %.3f", s.precision(), s.recall(), s.f1())
			got := formatDecisions(pred)
			path := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("decisions differ from %s:\ngot:\n%swant:\n%s", path, got, want)
			}
		})
	}
}
