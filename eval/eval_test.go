package eval_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/earshot-voice/earshot/codec"
	"github.com/earshot-voice/earshot/eval"
	"github.com/earshot-voice/earshot/voiceprint"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The shared fixtures (testdata/README.md): two utterances each, cut to
// their speech ± 0.25 s and joined; the speech spans below come from the
// manifest of the corpus they were cut from.
const (
	enrolS01  = "../testdata/enrol-s01.wav"  // u02 (5.19 s) + u04 (6.40 s)
	verifyS01 = "../testdata/verify-s01.wav" // u03 (4.06 s) + u00 (3.64 s)
	verifyS04 = "../testdata/verify-s04.wav" // u04 (4.29 s) + u05 (6.08 s)
)

func readFixture(t testing.TB, path string) []int16 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	format, pcm, err := codec.ReadWAV(bufio.NewReader(f), 1<<22)
	if err != nil {
		t.Fatal(err)
	}
	if format.SampleRate != 8000 || format.Channels != 1 {
		t.Fatalf("%s: %+v, want 8 kHz mono", path, format)
	}
	return pcm
}

func writeFile(t testing.TB, dir, name string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// piece is one utterance of the synthetic corpus: samples from..to of a
// fixture, with its speech relative to from.
type piece struct {
	speaker, id, condition string
	file                   string
	from, to               float64 // seconds; to 0 means the end
	segments               string
}

// buildCorpus writes a corpus made of fixture pieces as headerless µ-law
// files with a make-corpus.sh style manifest: speakers a and c share the
// base voice slt (they are never impostors of each other), b is kal. It
// adds one stereo call: the caller leg is enrol-s01, the agent leg
// verify-s04.
func buildCorpus(t testing.TB) string {
	dir := t.TempDir()
	pcm := map[string][]int16{}
	for _, f := range []string{enrolS01, verifyS01, verifyS04} {
		pcm[f] = readFixture(t, f)
	}
	pieces := []piece{
		{"a", "a_u02", "telephone", enrolS01, 0, 5.19, "0.25-4.94"},
		{"a", "a_u04", "telephone", enrolS01, 5.19, 0, "0.25-6.15"},
		{"a", "a_u03", "telephone", verifyS01, 0, 4.06, "0.25-3.81"},
		{"a", "a_u00", "clean", verifyS01, 4.06, 0, "0.25-3.39"},
		{"b", "b_u04", "telephone", verifyS04, 0, 4.29, "0.25-4.04"},
		{"b", "b_u05", "telephone", verifyS04, 4.29, 0, "0.25-5.83"},
		{"c", "c_u00", "gappy", verifyS01, 0, 0, "0.25-3.81;4.31-7.45"},
	}
	var m strings.Builder
	m.WriteString("wav,ulaw,split,speaker,utterance,source,engine,gender,condition,noise,snr_db,codec,level_dbfs,duration_s,speech_start_s,speech_end_s,speech_s,segments,clipped,text,prompt\n")
	for _, p := range pieces {
		s := pcm[p.file]
		from, to := int(p.from*8000), len(s)
		if p.to > 0 {
			to = int(p.to * 8000)
		}
		name := fmt.Sprintf("ulaw/%s/%s.ulaw", p.speaker, p.id)
		writeFile(t, dir, name, codec.AppendMuLawEncode(nil, s[from:to]))
		fmt.Fprintf(&m, "wav/%s/%s.wav,%s,test,%s,%s,synthetic,festival,f,%s,,,g711,,%.3f,,,,%s,0,\"Text, with a comma\",\n",
			p.speaker, p.id, name, p.speaker, p.id, p.condition, float64(to-from)/8000, p.segments)
	}
	writeFile(t, dir, "manifest.csv", []byte(m.String()))
	writeFile(t, dir, "speakers.csv", []byte("speaker,split,base_voice,licence\n"+
		"a,test,slt,\"x, y\"\nb,test,kal,z\nc,test,slt,z\n"))

	caller, agent := pcm[enrolS01], pcm[verifyS04]
	n := min(len(caller), len(agent))
	stereo := make([]int16, 0, 2*n)
	for i := range n {
		stereo = append(stereo, caller[i], agent[i])
	}
	writeFile(t, dir, "calls/call_01.ulaw", codec.AppendMuLawEncode(nil, stereo))
	writeFile(t, dir, "calls.csv", []byte("file,wav,segments,duration_s,caller,agent\n"+
		fmt.Sprintf("calls/call_01.ulaw,calls/call_01.wav,calls/call_01.segments.csv,%.2f,a,b\n", float64(n)/8000)))
	writeFile(t, dir, "calls/call_01.segments.csv", []byte("channel,speaker,start_s,end_s,text\n"+
		"1,a,0.25,4.94,\"One, two\"\n2,b,0.25,4.04,Three\n1,a,5.44,11.34,Four\n2,b,4.54,10.12,Five\n"))
	return dir
}

func model(t testing.TB) voiceprint.Model {
	models := voiceprint.NewRegistry().Models()
	if len(models) == 0 {
		t.Fatal("no built-in speaker model")
	}
	return models[0]
}

// expectedTrials counts the trials the protocol defines, from the
// enrolments' utterances as the report lists them: every utterance of the
// enrolled speaker the enrolment did not use is a genuine trial, every
// utterance of a speaker with another base voice an impostor trial.
func expectedTrials(c *eval.Corpus, rep *eval.Report) (genuine, impostor int) {
	base := map[string]string{}
	for _, u := range c.Utterances {
		base[u.Speaker] = u.BaseVoice
	}
	for _, col := range rep.Auth.Collections {
		if col.Kind != "genuine" {
			continue
		}
		spk := col.Speakers[0]
		for _, u := range c.Utterances {
			switch {
			case u.Speaker == spk && !slices.Contains(col.Utterances, u.ID):
				genuine++
			case base[u.Speaker] != base[spk]:
				impostor++
			}
		}
	}
	return genuine, impostor
}

func TestRun(t *testing.T) {
	dir := buildCorpus(t)
	c, err := eval.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := model(t)
	var progress bytes.Buffer
	rep, err := eval.Run(context.Background(), c, eval.Options{Model: m, Workers: 2, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("VAD", func(t *testing.T) {
		checkVAD := func(name string, s eval.VADScores, minF1 float64) {
			t.Helper()
			for _, v := range []float64{s.Precision, s.Recall, s.F1} {
				if !(v >= 0 && v <= 1) {
					t.Errorf("%s: %+v outside [0, 1]", name, s)
				}
			}
			if s.F1 < minF1 || s.Frames == 0 || s.SpeechFrames == 0 || s.TP+s.FP+s.FN+s.TN != s.Frames {
				t.Errorf("%s: %+v, want F1 ≥ %.2f over counted frames", name, s, minF1)
			}
		}
		// Clean fixtures of synthetic speech: a working VAD finds it.
		checkVAD("utterances", rep.VAD.VADScores, 0.8)
		if got := slices.Sorted(func(yield func(string) bool) {
			for k := range rep.VAD.ByCondition {
				if !yield(k) {
					return
				}
			}
		}); !reflect.DeepEqual(got, []string{"clean", "gappy", "telephone"}) {
			t.Errorf("conditions %v", got)
		}
		var sum int64
		for k, s := range rep.VAD.ByCondition {
			checkVAD(k, s, 0.5)
			sum += s.Frames
		}
		if sum != rep.VAD.Frames {
			t.Errorf("conditions hold %d frames, overall %d", sum, rep.VAD.Frames)
		}
		// The frames are the utterances' 10 ms hops.
		var hops int64
		for _, u := range c.Utterances {
			hops += int64(u.DurationS*100 + 0.5)
		}
		if d := rep.VAD.Frames - hops; d < -7 || d > 0 {
			t.Errorf("%d frames scored, the utterances hold %d hops", rep.VAD.Frames, hops)
		}
		if rep.VAD.Calls == nil {
			t.Fatal("no call figures")
		}
		checkVAD("caller", rep.VAD.Calls.Caller, 0.5)
		checkVAD("agent", rep.VAD.Calls.Agent, 0.5)
		if rep.VAD.Calls.Caller.Frames != rep.VAD.Calls.Agent.Frames {
			t.Errorf("legs of one call scored on %d and %d frames", rep.VAD.Calls.Caller.Frames, rep.VAD.Calls.Agent.Frames)
		}
	})

	t.Run("verification", func(t *testing.T) {
		v := rep.Verify
		// 3 speakers × 3 enrolments; b and c have less than 10 s of speech,
		// so their enrolments fall short but hold the model's minimum.
		if v.Enrolments != 9 || v.EnrolmentsFailed != 0 || v.TestsWithoutVoice != 0 {
			t.Fatalf("enrolments %d (failed %d), tests without voice %d", v.Enrolments, v.EnrolmentsFailed, v.TestsWithoutVoice)
		}
		if v.EnrolmentsShort != 6 {
			t.Errorf("%d enrolments short of 10 s, want b's and c's 6", v.EnrolmentsShort)
		}
		g, im := expectedTrials(c, rep)
		if v.GenuineTrials != g || v.ImpostorTrials != im {
			t.Errorf("trials %d genuine, %d impostor; the protocol gives %d, %d", v.GenuineTrials, v.ImpostorTrials, g, im)
		}
		// a and c share a base voice: b's 2 utterances are the only
		// impostors for their 6 enrolments, a's 4 and c's 1 for b's 3.
		if im != 6*2+3*5 {
			t.Errorf("%d impostor trials expected, want 27 (a–c pairs excluded)", im)
		}
		if v.EER == nil || *v.EER < 0 || *v.EER > 1 {
			t.Errorf("EER %v", v.EER)
		}
		if v.Genuine.N != g || v.Impostor.N != im || v.FalseRejectRate < 0 || v.FalseRejectRate > 1 {
			t.Errorf("score distributions %+v %+v, FRR %v", v.Genuine, v.Impostor, v.FalseRejectRate)
		}
	})

	t.Run("authenticity", func(t *testing.T) {
		a := rep.Auth
		count := map[string]int{}
		for _, col := range a.Collections {
			count[col.Kind]++
			if !(col.Score >= 0 && col.Score <= 1) {
				t.Errorf("%+v: score outside [0, 1]", col)
			}
			base := map[string]string{"a": "slt", "b": "kal", "c": "slt"}
			switch col.Kind {
			case "mix":
				if len(col.Speakers) != 2 || base[col.Speakers[0]] == base[col.Speakers[1]] {
					t.Errorf("mix of %v: want two speakers of different base voices", col.Speakers)
				}
				if col.VoiceSeconds != 10 {
					t.Errorf("%+v: want 10 s of voice", col)
				}
			case "genuine":
				// a has 17 s of speech; b (9.4 s) and c (6.7 s) less than 10.
				if (col.Speakers[0] == "a") != (col.VoiceSeconds == 10) || col.VoiceSeconds > 10 || col.VoiceSeconds < 3 {
					t.Errorf("%+v: want 10 s of voice for a, all there is for b and c", col)
				}
			case "loop":
				if len(col.Utterances) != 1 || col.VoiceSeconds != 10 {
					t.Errorf("loop %+v: want one utterance repeated to 10 s of voice", col)
				}
			}
		}
		// Mixes: a with b; b with c and a; c with b. Loops: 3 of a's 4
		// utterances, b's 2, c's 1.
		if want := map[string]int{"genuine": 9, "mix": 4, "loop": 6}; !reflect.DeepEqual(count, want) {
			t.Errorf("collections %v, want %v", count, want)
		}
		// Every speaker has fewer than adjacentMixes partners: all four
		// mixes are adjacent ones.
		if a.MixAdjacent != 4 || a.MixAdjacentRejectRate != a.MixRejectRate {
			t.Errorf("%d adjacent mixes rejected at %v, want 4 at the rate of all (%v)", a.MixAdjacent, a.MixAdjacentRejectRate, a.MixRejectRate)
		}
		for _, r := range []float64{a.GenuinePassRate, a.MixRejectRate, a.LoopRejectRate} {
			if r < 0 || r > 1 {
				t.Errorf("rate %v outside [0, 1]", r)
			}
		}
		// Looped audio is the one thing tiny data shows for certain.
		if a.Loop.Loop.P50 < 0.5 {
			t.Errorf("loop evidence of looped collections: %+v", a.Loop.Loop)
		}
	})

	t.Run("speed", func(t *testing.T) {
		s := rep.Speed
		if s.XRealtime <= 0 || s.AudioSeconds < 60 || s.PipelineSeconds <= 0 || s.Workers != 2 {
			t.Errorf("speed %+v", s)
		}
		if runtime.GOOS == "linux" && (s.XRealtimeCPU <= 0 || s.PipelineCPUSeconds <= 0) {
			t.Errorf("no CPU time on Linux: %+v", s)
		}
	})

	t.Run("JSON", func(t *testing.T) {
		data, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"vad.precision", "vad.recall", "vad.f1", "vad.by_condition.gappy.f1",
			"vad.by_condition.clean.f1", "vad.by_condition.telephone.f1", "vad.calls.caller.f1", "vad.calls.agent.f1",
			"verification.eer", "verification.genuine_trials", "verification.impostor_trials",
			"authenticity.genuine_pass_rate", "authenticity.mix_reject_rate", "authenticity.mix_adjacent_reject_rate", "authenticity.loop_reject_rate",
			"speed.x_realtime"} {
			var v any = doc
			for _, k := range strings.Split(path, ".") {
				obj, ok := v.(map[string]any)
				if !ok {
					v = nil
					break
				}
				v = obj[k]
			}
			if _, ok := v.(float64); !ok {
				t.Errorf("%s = %v, want a number", path, v)
			}
		}
	})

	t.Run("text", func(t *testing.T) {
		var b bytes.Buffer
		if err := rep.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"VAD", "calls, caller", "EER", "genuine", "mix", "loop", "× real time"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("report lacks %q:\n%s", want, b.String())
			}
		}
		if !strings.Contains(progress.String(), "jobs") {
			t.Errorf("progress %q", progress.String())
		}
	})

	t.Run("deterministic", func(t *testing.T) {
		again, err := eval.Run(context.Background(), c, eval.Options{Model: m, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		a, b := *rep, *again
		a.Speed, b.Speed = eval.SpeedReport{}, eval.SpeedReport{}
		if !reflect.DeepEqual(a, b) {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			t.Errorf("two workers and one give different figures:\n%s\n%s", ja, jb)
		}
	})
}

// TestRunWAV reads a manifest that names WAV files only (16-bit or µ-law
// WAVs are decoded and handed to the pipeline as linear PCM).
func TestRunWAV(t *testing.T) {
	dir := t.TempDir()
	var m strings.Builder
	m.WriteString("wav,speaker,utterance,condition,segments\n")
	for _, r := range []struct{ file, spk, id, segs string }{
		{enrolS01, "a", "a_1", "0.25-4.94;5.44-11.34"},
		{verifyS01, "a", "a_2", "0.25-3.81;4.31-7.45"},
		{verifyS04, "b", "b_1", "0.25-4.04;4.54-10.12"},
	} {
		data, err := os.ReadFile(r.file)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, "wav/"+filepath.Base(r.file), data)
		fmt.Fprintf(&m, "wav/%s,%s,%s,telephone,%s\n", filepath.Base(r.file), r.spk, r.id, r.segs)
	}
	writeFile(t, dir, "manifest.csv", []byte(m.String()))
	writeFile(t, dir, "speakers.csv", []byte("speaker,base_voice\na,slt\nb,kal\n"))
	c, err := eval.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := eval.Run(context.Background(), c, eval.Options{Model: model(t), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.VAD.F1 < 0.8 || rep.VAD.Calls != nil || rep.Calls != 0 {
		t.Errorf("VAD %+v, calls %v", rep.VAD.VADScores, rep.VAD.Calls)
	}
	g, im := expectedTrials(c, rep)
	if rep.Verify.GenuineTrials != g || rep.Verify.ImpostorTrials != im || im == 0 {
		t.Errorf("trials %d/%d, want %d/%d", rep.Verify.GenuineTrials, rep.Verify.ImpostorTrials, g, im)
	}
}

func TestRunErrors(t *testing.T) {
	dir := buildCorpus(t)
	c, err := eval.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("no model", func(t *testing.T) {
		if _, err := eval.Run(context.Background(), c, eval.Options{}); !errors.Is(err, eval.ErrModel) {
			t.Errorf("err = %v, want ErrModel", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := eval.Run(ctx, c, eval.Options{Model: model(t)}); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("missing audio", func(t *testing.T) {
		if err := os.Remove(filepath.Join(dir, "ulaw/b/b_u05.ulaw")); err != nil {
			t.Fatal(err)
		}
		_, err := eval.Run(context.Background(), c, eval.Options{Model: model(t)})
		if !errors.Is(err, eval.ErrAudio) || !strings.Contains(err.Error(), "b_u05") {
			t.Errorf("err = %v, want ErrAudio naming b_u05", err)
		}
	})
}
