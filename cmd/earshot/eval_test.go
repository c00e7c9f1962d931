package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earshot-voice/earshot/eval"
	"github.com/earshot-voice/earshot/voiceprint"
)

// evalCorpus writes a corpus of the three shared fixtures, named as WAVs
// by the manifest: speaker a (two files, one of them twice, so that every
// enrolment leaves a genuine test) and b (one) of different base voices,
// all of the given source.
func evalCorpus(t *testing.T, source string) string {
	dir := t.TempDir()
	manifest := "wav,speaker,utterance,condition,segments,source,text\n"
	for _, r := range []struct{ file, spk, id, segs string }{
		{"enrol-s01.wav", "a", "a_1", "0.25-4.94;5.44-11.34"},
		{"verify-s01.wav", "a", "a_2", "0.25-3.81;4.31-7.45"},
		{"verify-s01.wav", "a", "a_3", "0.25-3.81;4.31-7.45"},
		{"verify-s04.wav", "b", "b_1", "0.25-4.04;4.54-10.12"},
	} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", r.file))
		if err != nil {
			t.Fatal(err)
		}
		name := r.id + ".wav"
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		manifest += fmt.Sprintf("%s,%s,%s,telephone,%s,%s,\"Hello, world\"\n", name, r.spk, r.id, r.segs, source)
	}
	for name, data := range map[string]string{
		"manifest.csv": manifest,
		"speakers.csv": "speaker,base_voice\na,slt\nb,kal\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestEvalCommand(t *testing.T) {
	dir := evalCorpus(t, "synthetic")
	jsonFile := filepath.Join(t.TempDir(), "eval.json")
	var stdout, stderr strings.Builder
	if err := run(t.Context(), []string{"eval", "--corpus", dir, "--json", jsonFile}, &stdout, &stderr); err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"VAD, per 10 ms frame", "EER", "Authenticity at threshold 0.80", "× real time"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, stdout.String())
		}
	}
	// Not a terminal: plain progress lines, no bar.
	if !strings.Contains(stderr.String(), "eval: ") || strings.Contains(stderr.String(), "\r") {
		t.Errorf("progress %q", stderr.String())
	}
	data, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		VAD struct {
			F1          *float64 `json:"f1"`
			ByCondition map[string]struct {
				F1 *float64 `json:"f1"`
			} `json:"by_condition"`
		} `json:"vad"`
		Verification struct {
			EER            *float64 `json:"eer"`
			GenuineTrials  *int     `json:"genuine_trials"`
			ImpostorTrials *int     `json:"impostor_trials"`
		} `json:"verification"`
		Speed struct {
			XRealtime *float64 `json:"x_realtime"`
		} `json:"speed"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.VAD.F1 == nil || doc.VAD.ByCondition["telephone"].F1 == nil || doc.Verification.EER == nil ||
		doc.Verification.GenuineTrials == nil || *doc.Verification.GenuineTrials == 0 ||
		doc.Verification.ImpostorTrials == nil || *doc.Verification.ImpostorTrials == 0 || doc.Speed.XRealtime == nil {
		t.Errorf("JSON lacks figures:\n%s", data)
	}
}

// TestEvalCommandCorpora measures two corpora in one run: their speakers
// are kept apart (four speakers, each corpus's a the impostor of the
// other's), and the figures are also reported by source.
func TestEvalCommandCorpora(t *testing.T) {
	synth, real := evalCorpus(t, "synthetic"), evalCorpus(t, "real")
	jsonFile := filepath.Join(t.TempDir(), "eval.json")
	var stdout, stderr strings.Builder
	if err := run(t.Context(), []string{"eval", "--corpus", synth, "--corpus", real, "--json", jsonFile}, &stdout, &stderr); err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "8 utterances of 4 speakers") {
		t.Errorf("report does not count both corpora's speakers apart:\n%s", stdout.String())
	}
	data, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	type rates struct {
		EER             *float64 `json:"eer"`
		FalseRejectRate *float64 `json:"false_reject_rate"`
		FalseAcceptRate *float64 `json:"false_accept_rate"`
		GenuineTrials   int      `json:"genuine_trials"`
		ImpostorTrials  int      `json:"impostor_trials"`
	}
	type auth struct {
		GenuinePassRate *float64 `json:"genuine_pass_rate"`
		MixRejectRate   *float64 `json:"mix_reject_rate"`
		LoopRejectRate  *float64 `json:"loop_reject_rate"`
		Mixes           int      `json:"mixes"`
	}
	var doc struct {
		Verification struct {
			ImpostorTrials int              `json:"impostor_trials"`
			BySource       map[string]rates `json:"by_source"`
		} `json:"verification"`
		Authenticity struct {
			Mix struct {
				Score struct {
					N int `json:"n"`
				} `json:"score"`
			} `json:"mix"`
			BySource map[string]auth `json:"by_source"`
		} `json:"authenticity"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var within, mixes int
	for _, src := range []string{"real", "synthetic"} {
		v, a := doc.Verification.BySource[src], doc.Authenticity.BySource[src]
		if v.EER == nil || v.FalseRejectRate == nil || v.FalseAcceptRate == nil || v.GenuineTrials == 0 ||
			a.GenuinePassRate == nil || a.MixRejectRate == nil || a.LoopRejectRate == nil {
			t.Errorf("by_source.%s lacks figures:\n%s", src, data)
		}
		within += v.ImpostorTrials
		mixes += a.Mixes
	}
	// The trials and mixes across the two corpora count in neither source.
	if within >= doc.Verification.ImpostorTrials || mixes >= doc.Authenticity.Mix.Score.N {
		t.Errorf("impostor trials %d of %d, mixes %d of %d by source: the cross-source ones were counted",
			within, doc.Verification.ImpostorTrials, mixes, doc.Authenticity.Mix.Score.N)
	}
}

func TestEvalCommandErrors(t *testing.T) {
	dir := evalCorpus(t, "synthetic")
	notModel := filepath.Join(t.TempDir(), "not-a-model.bin")
	if err := os.WriteFile(notModel, []byte("EVPMODL1 but nothing after"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want error  // errors.Is, when set
		text string // in the message
	}{
		{"no corpus", []string{"eval"}, nil, "--corpus"},
		{"argument", []string{"eval", "--corpus", dir, "extra"}, nil, "no arguments"},
		{"unknown model", []string{"eval", "--corpus", dir, "--model", "beef"}, nil, `no built-in model has hash "beef"`},
		{"not a corpus", []string{"eval", "--corpus", t.TempDir()}, eval.ErrCorpus, "speakers.csv"},
		{"both models", []string{"eval", "--corpus", dir, "--model", "beef", "--model-file", notModel}, nil, "exclude each other"},
		{"no model file", []string{"eval", "--corpus", dir, "--model-file", filepath.Join(t.TempDir(), "none.bin")}, os.ErrNotExist, "none.bin"},
		{"not a model", []string{"eval", "--corpus", dir, "--model-file", notModel}, voiceprint.ErrModelFormat, "not-a-model.bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(t.Context(), tt.args, io.Discard, io.Discard)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("err = %v, want %v containing %q", err, tt.want, tt.text)
			}
		})
	}
}
