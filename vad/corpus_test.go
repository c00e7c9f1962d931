package vad

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

// Accuracy targets on a labelled telephony corpus (earshot eval's format): frame
// F1 per 10 ms frame, speech as the positive class.
const (
	targetOverall = 0.95 // every utterance and both channels of every call
	targetGappy   = 0.94 // utterances of the gappy condition
	targetCaller  = 0.93 // caller channel of the calls, agent channel as reference
)

// decideAll runs a fresh Detector over pcm (and ref, when not nil) and
// returns one decision per whole 10 ms frame, aligned with the input: the
// Delay() lag is taken out and the pending frames are flushed.
func decideAll(t testing.TB, pcm, ref []int16) []bool {
	d, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := len(pcm) / frame8k
	out := make([]bool, 0, n)
	for f := 0; f < n; f++ {
		fr := pcm[f*frame8k : (f+1)*frame8k]
		var v bool
		if ref != nil {
			v, err = d.ProcessWithReference(fr, ref[f*frame8k:(f+1)*frame8k])
		} else {
			v, err = d.Process(fr)
		}
		if err != nil {
			t.Fatal(err)
		}
		if f >= d.Delay() {
			out = append(out, v)
		}
	}
	out = d.Flush(out)
	if len(out) != n {
		t.Fatalf("got %d decisions for %d frames", len(out), n)
	}
	return out
}

// TestCorpus measures frame precision, recall and F1 on the corpus in the
// directory named by EARSHOT_CORPUS (manifest.csv, ulaw/, calls/) and fails
// when F1 is below the targets. Run it as
//
//	EARSHOT_CORPUS=/tmp/corpus-dev go test -run TestCorpus -v ./vad
func TestCorpus(t *testing.T) {
	dir := os.Getenv("EARSHOT_CORPUS")
	if dir == "" {
		t.Skip("EARSHOT_CORPUS is not set: point it at a labelled corpus (docs/EVALUATION.md) to measure accuracy")
	}
	items, err := loadCorpus(dir)
	if err != nil {
		t.Fatal(err)
	}
	res := map[string]*score{}
	add := func(key string, pred, truth []bool) {
		s := res[key]
		if s == nil {
			s = &score{}
			res[key] = s
		}
		for i, p := range pred {
			s.add(p, truth[i])
		}
	}
	start := time.Now()
	audio := 0
	for _, it := range items {
		var ref []int16
		if it.group == "caller" {
			ref = it.ref
		}
		pred := decideAll(t, it.pcm, ref)
		audio += len(it.pcm)
		add("overall", pred, it.truth)
		// The first second of every signal, where the noise is still
		// unknown.
		n1 := min(100, len(pred))
		add("first-second", pred[:n1], it.truth[:n1])
		if it.group == "caller" || it.group == "agent" {
			add("calls", pred, it.truth)
			add("call/"+it.group, pred, it.truth)
			add("call/"+it.group+"/"+it.noise, pred, it.truth)
			if it.group == "caller" {
				echo := "no-echo"
				if it.echo {
					echo = "echo"
				}
				add("call/caller/"+echo, pred, it.truth)
				// For comparison only: the caller leg without its reference.
				add("call/caller/without-reference", decideAll(t, it.pcm, nil), it.truth)
				audio += len(it.pcm)
			}
		} else {
			add("utterances", pred, it.truth)
			add("utt/"+it.group, pred, it.truth)
			add("utt/voice/"+it.source, pred, it.truth)
			add("utt/codec/"+it.codec, pred, it.truth)
			if it.noise != "" {
				add("utt/noise/"+it.noise, pred, it.truth)
			}
		}
	}
	el := time.Since(start)
	keys := make([]string, 0, len(res))
	for k := range res {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "corpus %s: %d signals\n", dir, len(items))
	fmt.Fprintf(&b, "%-34s %9s %9s %7s %7s %7s\n", "group", "frames", "speech", "P", "R", "F1")
	for _, k := range keys {
		s := res[k]
		fmt.Fprintf(&b, "%-34s %9d %9d %7.4f %7.4f %7.4f\n", k, s.tp+s.fp+s.fn+s.tn, s.tp+s.fn, s.precision(), s.recall(), s.f1())
	}
	fmt.Fprintf(&b, "%.1f min of audio in %v (%.0fx real time, including decoding and evaluation)", float64(audio)/8000/60, el.Round(time.Millisecond), float64(audio)/8000/el.Seconds())
	t.Log(b.String())
	for _, c := range []struct {
		key    string
		target float64
	}{{"overall", targetOverall}, {"utterances", targetOverall}, {"utt/gappy", targetGappy}, {"call/caller", targetCaller}} {
		s, ok := res[c.key]
		if !ok {
			continue
		}
		if f := s.f1(); f < c.target {
			t.Errorf("%s: F1 %.4f below the target %.2f", c.key, f, c.target)
		}
	}
}
