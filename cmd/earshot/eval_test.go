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
)

// evalCorpus writes a corpus of the three shared fixtures, named as WAVs
// by the manifest: speaker a (two files, one of them twice, so that every
// enrolment leaves a genuine test) and b (one) of different base voices.
func evalCorpus(t *testing.T) string {
	dir := t.TempDir()
	manifest := "wav,speaker,utterance,condition,segments,text\n"
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
		manifest += fmt.Sprintf("%s,%s,%s,telephone,%s,\"Hello, world\"\n", name, r.spk, r.id, r.segs)
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
	dir := evalCorpus(t)
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

func TestEvalCommandErrors(t *testing.T) {
	dir := evalCorpus(t)
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
