package voiceprint_test

import (
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/earshot-voice/earshot/internal/corpus"
	"github.com/earshot-voice/earshot/internal/trial"
	"github.com/earshot-voice/earshot/voiceprint"
)

// TestCorpusEval measures the shipped model on the corpus (or corpora,
// comma-separated) named by EARSHOT_CORPUS, in earshot eval's format:
// verification EER with 10 s of enrolment
// voice (three enrolment rotations per speaker; impostor trials only
// between speakers of different base voices) and the authenticity figures
// at threshold 0.8 on 20 s collections: genuine single-speaker
// collections, concatenations of every pair of speakers with different base
// voices (10 s each), looped utterances, and (reported, not a target)
// overlapped pairs. Voiced frames come from the corpus's ground-truth
// segments, not a VAD. EARSHOT_MODEL names another model file to measure
// instead of the shipped one; EARSHOT_EVAL_ERRORS=1 lists the authenticity
// errors.
//
//	EARSHOT_CORPUS=/tmp/corpus-dev go test -run CorpusEval -v ./voiceprint/
func TestCorpusEval(t *testing.T) {
	dirs := os.Getenv("EARSHOT_CORPUS")
	if dirs == "" {
		t.Skip("EARSHOT_CORPUS is unset: set it to a corpus directory made by make-corpus.sh to measure EER and authenticity")
	}
	m := voiceprint.NewRegistry().Models()[0]
	if p := os.Getenv("EARSHOT_MODEL"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if m, err = voiceprint.ParseModel(b); err != nil {
			t.Fatal(err)
		}
	}
	var utts []corpus.Utterance
	for _, d := range strings.Split(dirs, ",") {
		us, err := corpus.Load(d)
		if err != nil {
			t.Fatal(err)
		}
		utts = append(utts, us...)
	}
	t.Logf("model %s, %d utterances", m, len(utts))

	v, err := trial.Verify(m, utts, 10, 3)
	if err != nil {
		t.Fatal(err)
	}
	eer, _ := trial.EER(v.GenuineCal, v.ImpostorCal)
	frr, far := trial.Rates(v.GenuineCal, v.ImpostorCal, m.DefaultSimilarityThreshold)
	t.Logf("verification: %d enrolments (10 s voice), %d genuine and %d impostor trials", v.Models, len(v.Genuine), len(v.Impostor))
	t.Logf("EER %.2f%%; at the default threshold %.3f: FRR %.2f%%, FAR %.2f%%", 100*eer, m.DefaultSimilarityThreshold, 100*frr, 100*far)

	sets, err := trial.Sets(utts, 20)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string][]voiceprint.Authenticity{}
	for i := range sets {
		a, err := trial.Authenticity(m, &sets[i])
		if err != nil {
			t.Fatal(err)
		}
		by[sets[i].Kind] = append(by[sets[i].Kind], a)
		if os.Getenv("EARSHOT_EVAL_ERRORS") != "" && a.Score < 0.8 != (sets[i].Kind != "genuine") {
			t.Logf("%s %v: authenticity %+v", sets[i].Kind, sets[i].Speakers, a)
		}
	}
	rate := func(as []voiceprint.Authenticity, pass bool) float64 {
		n := 0
		for _, a := range as {
			if (a.Score >= 0.8) == pass {
				n++
			}
		}
		return 100 * float64(n) / float64(len(as))
	}
	t.Logf("authenticity at 0.8: genuine pass %.1f%% (%d), two-speaker mix reject %.1f%% (%d), loop reject %.1f%% (%d); "+
		"not targets: overlapped two-speaker reject %.1f%% (%d), loop with fresh noise at 20 dB reject %.1f%% (%d)",
		rate(by["genuine"], true), len(by["genuine"]), rate(by["mix"], false), len(by["mix"]), rate(by["loop"], false), len(by["loop"]),
		rate(by["overlap"], false), len(by["overlap"]), rate(by["loop+noise"], false), len(by["loop+noise"]))
	for _, k := range []string{"genuine", "mix", "overlap", "loop", "loop+noise"} {
		as := by[k]
		q := func(f func(voiceprint.Authenticity) float64) string {
			v := make([]float64, len(as))
			for i, a := range as {
				v[i] = f(a)
			}
			sort.Float64s(v)
			return quantiles(v)
		}
		t.Logf("%-8s score %s", k, q(func(a voiceprint.Authenticity) float64 { return a.Score }))
		t.Logf("%-8s consistency %s", k, q(func(a voiceprint.Authenticity) float64 { return a.Consistency }))
		t.Logf("%-8s loop %s", k, q(func(a voiceprint.Authenticity) float64 { return a.Loop }))
		t.Logf("%-8s snr_db %s", k, q(func(a voiceprint.Authenticity) float64 { return a.SNRdB }))
	}
}

// quantiles formats min, 10th, 50th, 90th percentile and max of sorted v.
func quantiles(v []float64) string {
	if len(v) == 0 {
		return "(none)"
	}
	at := func(p float64) float64 { return v[int(p*float64(len(v)-1))] }
	return strings.Join([]string{
		"min " + ff(v[0]), "p10 " + ff(at(0.1)), "p50 " + ff(at(0.5)), "p90 " + ff(at(0.9)), "max " + ff(v[len(v)-1]),
	}, "  ")
}

func ff(x float64) string { return strings.TrimRight(strings.TrimRight(fmtF(x), "0"), ".") }

func fmtF(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
