package eval

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/earshot-voice/earshot/voiceprint"
)

// Report holds every figure of a run. Its JSON form (encoding/json) is
// what earshot eval --json writes; the paths docs/EVALUATION.md names
// (vad.f1, verification.eer, speed.x_realtime, …) are fields of it.
type Report struct {
	Corpus     string      `json:"corpus"`
	Model      ModelInfo   `json:"model"`
	Utterances int         `json:"utterances"`
	Speakers   int         `json:"speakers"`
	Calls      int         `json:"calls"`
	VAD        VADReport   `json:"vad"`
	Verify     VerifyRep   `json:"verification"`
	Auth       AuthReport  `json:"authenticity"`
	Speed      SpeedReport `json:"speed"`
	// Trials lists every verification trial, in run order. It is not
	// written to JSON (there are thousands); the training command fits
	// the model's calibration on it.
	Trials []Trial `json:"-"`
}

// Trial is one verification trial: a test utterance's voice against one
// enrolment.
type Trial struct {
	Genuine bool
	// Score is the calibrated similarity, Raw the score before
	// calibration (voiceprint.Result).
	Score, Raw float64
	// TestVoiceSeconds is the voice of the test utterance.
	TestVoiceSeconds float64
	// Source is the source of both the enrolment and the test speaker
	// (real, synthetic), or "" when they differ.
	Source string
}

// ModelInfo names the measured model.
type ModelInfo struct {
	Hash            string  `json:"hash"`
	Name            string  `json:"name"`
	Threshold       float64 `json:"default_similarity_threshold"`
	MinVoiceSeconds float64 `json:"min_voice_seconds"`
}

// VADScores are frame-level precision, recall and F1 of the voice
// decisions, speech positive, with the counts behind them.
type VADScores struct {
	Precision    float64 `json:"precision"`
	Recall       float64 `json:"recall"`
	F1           float64 `json:"f1"`
	Frames       int64   `json:"frames"`
	SpeechFrames int64   `json:"speech_frames"`
	TP           int64   `json:"tp"`
	FP           int64   `json:"fp"`
	FN           int64   `json:"fn"`
	TN           int64   `json:"tn"`
}

func scores(c Confusion) VADScores {
	return VADScores{Precision: c.Precision(), Recall: c.Recall(), F1: c.F1(),
		Frames: c.TP + c.FP + c.FN + c.TN, SpeechFrames: c.TP + c.FN, TP: c.TP, FP: c.FP, FN: c.FN, TN: c.TN}
}

// VADReport: the utterances overall (the embedded scores), by condition
// and by source, and the legs of the stereo calls (nil without calls).
type VADReport struct {
	VADScores
	ByCondition map[string]VADScores `json:"by_condition"`
	BySource    map[string]VADScores `json:"by_source"`
	Calls       *CallsVAD            `json:"calls"`
}

// CallsVAD scores the two legs of the stereo calls: the caller (channel 1,
// external) analysed with the agent leg as echo reference, and the agent
// (channel 2) with the caller leg as reference.
type CallsVAD struct {
	Caller VADScores `json:"caller"`
	Agent  VADScores `json:"agent"`
}

// VerifyRep is the speaker-verification outcome.
type VerifyRep struct {
	// The EER, the trial counts, and the false reject and accept rates at
	// the model's default similarity threshold (Threshold), over all
	// trials.
	SourceVerify
	// EnrolSeconds is the voice each enrolment collects; Enrolments made,
	// EnrolmentsShort those whose speaker had less voice than that (still
	// used when above the model's minimum), EnrolmentsFailed those below
	// the model's minimum (no template, no trials).
	EnrolSeconds     float64      `json:"enrol_seconds"`
	Enrolments       int          `json:"enrolments"`
	EnrolmentsShort  int          `json:"enrolments_short"`
	EnrolmentsFailed int          `json:"enrolments_failed"`
	EnrolVoice       Distribution `json:"enrol_voice_seconds"`
	// TestVoice is the voice the VAD found in the test utterances;
	// TestsBelowMinVoice counts those below the model's MinVoiceSeconds
	// (which a live verify session would refuse), TestsWithoutVoice the
	// utterances without any voice (no trial).
	TestVoice          Distribution `json:"test_voice_seconds"`
	TestsBelowMinVoice int          `json:"tests_below_min_voice"`
	TestsWithoutVoice  int          `json:"tests_without_voice"`
	// Threshold is the model's default similarity threshold.
	Threshold float64 `json:"threshold"`
	// Calibrated score distributions.
	Genuine  Distribution `json:"genuine_scores"`
	Impostor Distribution `json:"impostor_scores"`
	// LongTests repeats the EER over the trials whose test utterance
	// holds at least the model's MinVoiceSeconds of voice: those a live
	// verify session would score.
	LongTests TrialSubset `json:"long_tests"`
	// BySource repeats the figures for the trials whose enrolment and test
	// speakers are both of one source (real, synthetic); a trial across
	// sources counts in none.
	BySource map[string]SourceVerify `json:"by_source"`
}

// TrialSubset is the EER of a subset of the trials.
type TrialSubset struct {
	EER            *float64 `json:"eer"`
	GenuineTrials  int      `json:"genuine_trials"`
	ImpostorTrials int      `json:"impostor_trials"`
}

// AuthSet describes the authenticity of one kind of collection.
type AuthSet struct {
	Score       Distribution `json:"score"`
	Consistency Distribution `json:"consistency"`
	PitchShift  Distribution `json:"pitch_shift"`
	PitchShiftZ Distribution `json:"pitch_shift_z"`
	SNRdB       Distribution `json:"snr_db"`
	Loop        Distribution `json:"loop"`
	Voice       Distribution `json:"voice_seconds"`
}

// AuthReport is the authenticity outcome at Threshold.
type AuthReport struct {
	Threshold       float64 `json:"threshold"`
	GenuinePassRate float64 `json:"genuine_pass_rate"`
	MixRejectRate   float64 `json:"mix_reject_rate"`
	// MixAdjacentRejectRate is the reject rate of the mixes of speakers
	// next to each other in name order (MixAdjacent of them), mostly
	// voices of one synthesiser in make-corpus.sh's corpora: the hardest
	// pairs, and the sample the mix figure used before 2026-11-24.
	MixAdjacentRejectRate float64 `json:"mix_adjacent_reject_rate"`
	MixAdjacent           int     `json:"mix_adjacent"`
	LoopRejectRate        float64 `json:"loop_reject_rate"`
	// BySource repeats the rates for the collections whose speakers are
	// all of one source (a mix of a real and a synthetic voice counts in
	// neither).
	BySource map[string]SourceAuth `json:"by_source"`
	Genuine  AuthSet               `json:"genuine"`
	Mix      AuthSet               `json:"mix"`
	Loop     AuthSet               `json:"loop"`
	// Collections lists every collection measured, in run order.
	Collections []AuthCollection `json:"collections"`
}

// AuthCollection is one authenticity collection and what was measured.
type AuthCollection struct {
	Kind     string   `json:"kind"` // genuine, mix or loop
	Speakers []string `json:"speakers"`
	// Source is the source of all its speakers (real, synthetic), or ""
	// when they differ.
	Source       string   `json:"source"`
	Utterances   []string `json:"utterances"`
	VoiceSeconds float64  `json:"voice_seconds"`
	Score        float64  `json:"score"`
	Consistency  float64  `json:"consistency"`
	PitchShift   float64  `json:"pitch_shift"`
	PitchShiftZ  float64  `json:"pitch_shift_z"`
	Segments     int      `json:"segments"`
	SNRdB        float64  `json:"snr_db"`
	Clipping     float64  `json:"clipping"`
	Loop         float64  `json:"loop"`
}

// SpeedReport: XRealtime is the audio through the pipeline (decode, VAD,
// MFCC, model accumulation) over the wall time those pipelines took on
// their worker goroutines: × real time per core, pessimistic when other
// processes compete for the cores. XRealtimeCPU divides by the CPU time of
// the workers' threads instead (0 where the system does not tell it).
// TrialSeconds is the verification scoring, WallSeconds the whole run.
type SpeedReport struct {
	XRealtime          float64 `json:"x_realtime"`
	XRealtimeCPU       float64 `json:"x_realtime_cpu"`
	AudioSeconds       float64 `json:"audio_seconds"`
	PipelineSeconds    float64 `json:"pipeline_seconds"`
	PipelineCPUSeconds float64 `json:"pipeline_cpu_seconds"`
	TrialSeconds       float64 `json:"trial_seconds"`
	WallSeconds        float64 `json:"wall_seconds"`
	Workers            int     `json:"workers"`
	GOMAXPROCS         int     `json:"gomaxprocs"`
}

// report combines the results in job order.
func (r *runner) report(wall time.Duration) *Report {
	rep := &Report{Corpus: r.c.Dir, Utterances: len(r.c.Utterances), Speakers: len(r.spks), Calls: len(r.c.Calls),
		Model: ModelInfo{Hash: r.m.Hash, Name: r.m.Name, Threshold: r.m.DefaultSimilarityThreshold,
			MinVoiceSeconds: r.m.MinVoiceSeconds}}
	var sp timing
	var trialTime time.Duration

	// VAD.
	var all Confusion
	byCond, bySrc := map[string]Confusion{}, map[string]Confusion{}
	for i, res := range r.uttResults {
		u := &r.c.Utterances[i]
		all.Merge(res.conf)
		c := byCond[u.Condition]
		c.Merge(res.conf)
		byCond[u.Condition] = c
		if u.Source != "" {
			c = bySrc[u.Source]
			c.Merge(res.conf)
			bySrc[u.Source] = c
		}
		sp.merge(res.timing)
		trialTime += res.trialTime
	}
	rep.VAD.VADScores = scores(all)
	rep.VAD.ByCondition = map[string]VADScores{}
	for k, c := range byCond {
		rep.VAD.ByCondition[k] = scores(c)
	}
	rep.VAD.BySource = map[string]VADScores{}
	for k, c := range bySrc {
		rep.VAD.BySource[k] = scores(c)
	}
	if len(r.calls) > 0 {
		var legs [2]Confusion
		for i, res := range r.calls {
			legs[i%2].Merge(res.conf)
			sp.merge(res.timing)
		}
		rep.VAD.Calls = &CallsVAD{Caller: scores(legs[0]), Agent: scores(legs[1])}
	}

	// Verification.
	v := &rep.Verify
	v.EnrolSeconds = r.opts.EnrolSeconds
	v.Threshold = r.m.DefaultSimilarityThreshold
	var enrolVoice, testVoice []float64
	for _, e := range r.enrolments {
		sp.merge(e.timing)
		if e.tmpl == nil {
			v.EnrolmentsFailed++
			continue
		}
		v.Enrolments++
		if e.voice < r.opts.EnrolSeconds-0.005 {
			v.EnrolmentsShort++
		}
		enrolVoice = append(enrolVoice, e.voice)
	}
	for i, res := range r.uttResults {
		if res.voice == 0 {
			v.TestsWithoutVoice++
			continue
		}
		testSrc := r.src[r.speakerOf(i)]
		testVoice = append(testVoice, res.voice)
		if res.voice < r.m.MinVoiceSeconds {
			v.TestsBelowMinVoice++
		}
		for _, t := range res.trials {
			src := commonSource(r.src[r.enrolments[t.enrolment].spk], testSrc)
			rep.Trials = append(rep.Trials, Trial{Genuine: t.genuine, Score: t.score, Raw: t.raw, TestVoiceSeconds: res.voice, Source: src})
		}
	}
	v.EnrolVoice, v.TestVoice = Summarise(enrolVoice), Summarise(testVoice)
	v.SourceVerify = verifyFigures(rep.Trials, v.Threshold)
	var genuine, impostor []float64
	var long []Trial
	for _, t := range rep.Trials {
		if t.Genuine {
			genuine = append(genuine, t.Score)
		} else {
			impostor = append(impostor, t.Score)
		}
		if t.TestVoiceSeconds >= r.m.MinVoiceSeconds {
			long = append(long, t)
		}
	}
	v.Genuine, v.Impostor = Summarise(genuine), Summarise(impostor)
	l := verifyFigures(long, v.Threshold)
	v.LongTests = TrialSubset{EER: l.EER, GenuineTrials: l.GenuineTrials, ImpostorTrials: l.ImpostorTrials}
	v.BySource = verifyBySource(rep.Trials, v.Threshold)

	// Authenticity.
	a := &rep.Auth
	a.Threshold = r.opts.AuthenticityThreshold
	var gen, mix, adjacent, loop []float64
	var genSet, mixSet, loopSet authSamples
	for _, e := range r.enrolments {
		gen = append(gen, e.auth.Score)
		genSet.add(e.auth, e.voice)
		a.Collections = append(a.Collections, r.authCollection("genuine", []int{e.spk}, e.utts, e.auth, e.voice))
	}
	for _, m := range r.mixes {
		sp.merge(m.timing)
		mix = append(mix, m.auth.Score)
		if m.adjacent {
			adjacent = append(adjacent, m.auth.Score)
		}
		mixSet.add(m.auth, m.voice)
		a.Collections = append(a.Collections, r.authCollection("mix", m.spks, m.utts, m.auth, m.voice))
	}
	for _, l := range r.loops {
		if l.utt < 0 {
			continue
		}
		sp.merge(l.timing)
		loop = append(loop, l.auth.Score)
		loopSet.add(l.auth, l.voice)
		a.Collections = append(a.Collections, r.authCollection("loop", l.spks, l.utts, l.auth, l.voice))
	}
	a.GenuinePassRate = shareAtLeast(gen, a.Threshold)
	a.MixRejectRate = shareBelow(mix, a.Threshold)
	a.MixAdjacentRejectRate, a.MixAdjacent = shareBelow(adjacent, a.Threshold), len(adjacent)
	a.LoopRejectRate = shareBelow(loop, a.Threshold)
	a.BySource = authBySource(a.Collections, a.Threshold)
	a.Genuine, a.Mix, a.Loop = genSet.summary(), mixSet.summary(), loopSet.summary()

	rep.Speed = SpeedReport{AudioSeconds: sp.audio, PipelineSeconds: sp.elapsed.Seconds(),
		TrialSeconds: trialTime.Seconds(), WallSeconds: wall.Seconds(), Workers: r.opts.Workers,
		GOMAXPROCS: runtime.GOMAXPROCS(0)}
	if sp.elapsed > 0 {
		rep.Speed.XRealtime = sp.audio / sp.elapsed.Seconds()
	}
	if !sp.noCPU && sp.cpu > 0 {
		rep.Speed.PipelineCPUSeconds = sp.cpu.Seconds()
		rep.Speed.XRealtimeCPU = sp.audio / sp.cpu.Seconds()
	}
	return rep
}

type authSamples struct{ score, cons, pitch, pitchZ, snr, loop, voice []float64 }

func (s *authSamples) add(a voiceprint.Authenticity, voice float64) {
	s.score = append(s.score, a.Score)
	s.cons = append(s.cons, a.Consistency)
	s.pitch = append(s.pitch, a.PitchShift)
	s.pitchZ = append(s.pitchZ, a.PitchShiftZ)
	s.snr = append(s.snr, a.SNRdB)
	s.loop = append(s.loop, a.Loop)
	s.voice = append(s.voice, voice)
}

func (r *runner) authCollection(kind string, spks, utts []int, a voiceprint.Authenticity, voice float64) AuthCollection {
	c := AuthCollection{Kind: kind, VoiceSeconds: voice, Score: a.Score, Consistency: a.Consistency, PitchShift: a.PitchShift,
		PitchShiftZ: a.PitchShiftZ, Segments: a.Segments, SNRdB: a.SNRdB, Clipping: a.Clipping, Loop: a.Loop}
	for i, k := range spks {
		c.Speakers = append(c.Speakers, r.spks[k])
		if i == 0 {
			c.Source = r.src[k]
		} else {
			c.Source = commonSource(c.Source, r.src[k])
		}
	}
	for _, u := range utts {
		c.Utterances = append(c.Utterances, r.c.Utterances[u].ID)
	}
	return c
}

func (s *authSamples) summary() AuthSet {
	return AuthSet{Score: Summarise(s.score), Consistency: Summarise(s.cons), PitchShift: Summarise(s.pitch),
		PitchShiftZ: Summarise(s.pitchZ), SNRdB: Summarise(s.snr),
		Loop: Summarise(s.loop), Voice: Summarise(s.voice)}
}

// The project's targets on the full dev corpus, printed beside the figures.
const (
	targetVADF1       = 0.95
	targetVADGappyF1  = 0.94
	targetVADCallerF1 = 0.93
	targetEER         = 0.04
	targetGenuinePass = 0.95
	targetReject      = 0.90
	targetXRealtime   = 2000
)

// WriteText writes the report for a person: every figure, with the
// project's targets beside those that have one.
func (rep *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	mark := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT MET"
	}
	p("earshot eval: %s\n", rep.Corpus)
	p("model %s (%s), default similarity threshold %.3f, min voice %.1f s\n",
		rep.Model.Name, rep.Model.Hash, rep.Model.Threshold, rep.Model.MinVoiceSeconds)
	p("%d utterances of %d speakers, %d stereo calls\n\n", rep.Utterances, rep.Speakers, rep.Calls)

	vadLine := func(name string, s VADScores, target float64) {
		p("  %-18s P %.3f  R %.3f  F1 %.3f  (%d frames, %d speech)", name, s.Precision, s.Recall, s.F1, s.Frames, s.SpeechFrames)
		if target > 0 {
			p("  target F1 ≥ %.2f: %s", target, mark(s.F1 >= target))
		}
		p("\n")
	}
	p("VAD, per 10 ms frame against the ground-truth segments\n")
	vadLine("utterances", rep.VAD.VADScores, targetVADF1)
	for _, k := range sortedKeys(rep.VAD.ByCondition) {
		t := 0.0
		if k == "gappy" {
			t = targetVADGappyF1
		}
		vadLine("  "+k, rep.VAD.ByCondition[k], t)
	}
	for _, k := range sortedKeys(rep.VAD.BySource) {
		vadLine("  "+k, rep.VAD.BySource[k], 0)
	}
	if c := rep.VAD.Calls; c != nil {
		vadLine("calls, caller", c.Caller, targetVADCallerF1)
		vadLine("calls, agent", c.Agent, 0)
	}

	v := rep.Verify
	p("\nSpeaker verification, %.0f s enrolment voice\n", v.EnrolSeconds)
	p("  enrolments %d (%d short of %.0f s, %d failed), voice p5/p50 %.1f/%.1f s\n",
		v.Enrolments, v.EnrolmentsShort, v.EnrolSeconds, v.EnrolmentsFailed, v.EnrolVoice.P5, v.EnrolVoice.P50)
	p("  test utterances: voice p5/p50/p95 %.1f/%.1f/%.1f s, %d below the model's %.1f s, %d without voice\n",
		v.TestVoice.P5, v.TestVoice.P50, v.TestVoice.P95, v.TestsBelowMinVoice, rep.Model.MinVoiceSeconds, v.TestsWithoutVoice)
	p("  trials: %d genuine, %d impostor\n", v.GenuineTrials, v.ImpostorTrials)
	if v.EER != nil {
		p("  EER %.2f %%", 100**v.EER)
		if v.EERThreshold != nil {
			p(" at score %.3f", *v.EERThreshold)
		}
		p("  target ≤ %.0f %%: %s\n", 100*targetEER, mark(*v.EER <= targetEER))
		p("  at the default threshold %.3f: false reject %.2f %%, false accept %.2f %%\n",
			v.Threshold, 100*v.FalseRejectRate, 100*v.FalseAcceptRate)
	} else {
		p("  EER: no trials\n")
	}
	if l := v.LongTests; l.EER != nil {
		p("  tests with ≥ %.1f s of voice only: EER %.2f %% (%d genuine, %d impostor trials)\n",
			rep.Model.MinVoiceSeconds, 100**l.EER, l.GenuineTrials, l.ImpostorTrials)
	}
	for _, k := range sortedKeys(v.BySource) {
		s := v.BySource[k]
		if s.EER == nil {
			p("  %-10s EER: no trials (%d genuine, %d impostor)\n", k, s.GenuineTrials, s.ImpostorTrials)
			continue
		}
		p("  %-10s EER %5.2f %%, at the default threshold false reject %5.2f %%, false accept %5.2f %% (%d genuine, %d impostor)\n",
			k, 100**s.EER, 100*s.FalseRejectRate, 100*s.FalseAcceptRate, s.GenuineTrials, s.ImpostorTrials)
	}
	p("  genuine scores  %s\n  impostor scores %s\n", distText(v.Genuine), distText(v.Impostor))

	a := rep.Auth
	p("\nAuthenticity at threshold %.2f\n", a.Threshold)
	p("  genuine (%d): pass %5.1f %%  target ≥ %.0f %%: %s\n", a.Genuine.Score.N, 100*a.GenuinePassRate,
		100*targetGenuinePass, mark(a.GenuinePassRate >= targetGenuinePass))
	p("  mix     (%d): reject %5.1f %%  target ≥ %.0f %%: %s\n", a.Mix.Score.N, 100*a.MixRejectRate,
		100*targetReject, mark(a.MixRejectRate >= targetReject))
	p("    of which adjacent in name order (%d, mostly one synthesiser's voices): reject %5.1f %%\n",
		a.MixAdjacent, 100*a.MixAdjacentRejectRate)
	p("  loop    (%d): reject %5.1f %%  target ≥ %.0f %%: %s\n", a.Loop.Score.N, 100*a.LoopRejectRate,
		100*targetReject, mark(a.LoopRejectRate >= targetReject))
	for _, k := range sortedKeys(a.BySource) {
		s := a.BySource[k]
		p("  %-10s genuine pass %5.1f %% (%d), mixes rejected %5.1f %% (%d), loops rejected %5.1f %% (%d)\n",
			k, 100*s.GenuinePassRate, s.Genuine, 100*s.MixRejectRate, s.Mixes, 100*s.LoopRejectRate, s.Loops)
	}
	for _, s := range []struct {
		name string
		set  AuthSet
	}{{"genuine", a.Genuine}, {"mix", a.Mix}, {"loop", a.Loop}} {
		p("  %-8s score %s\n", s.name, distText(s.set.Score))
		p("  %-8s consistency p50 %.2f, pitch shift p50 %.1f st (%.1f spreads), SNR p50 %.0f dB, loop p50 %.2f, voice p50 %.1f s\n", "",
			s.set.Consistency.P50, s.set.PitchShift.P50, s.set.PitchShiftZ.P50, s.set.SNRdB.P50, s.set.Loop.P50, s.set.Voice.P50)
	}

	s := rep.Speed
	p("\nSpeed of the pipeline (decode, VAD, MFCC, model accumulation), %.0f s of audio on %d worker(s)\n",
		s.AudioSeconds, s.Workers)
	p("  by wall time on the workers: %.1f s, %.0f× real time per core  target ≥ %d×: %s\n",
		s.PipelineSeconds, s.XRealtime, targetXRealtime, mark(s.XRealtime >= targetXRealtime))
	if s.XRealtimeCPU > 0 {
		p("  by their threads' CPU time:  %.1f s, %.0f× real time per core  target ≥ %d×: %s\n",
			s.PipelineCPUSeconds, s.XRealtimeCPU, targetXRealtime, mark(s.XRealtimeCPU >= targetXRealtime))
	}
	p("  verification scoring %.1f s; whole run %.1f s wall\n", s.TrialSeconds, s.WallSeconds)
	_, err := io.WriteString(w, b.String())
	return err
}

func distText(d Distribution) string {
	if d.N == 0 {
		return "none"
	}
	return fmt.Sprintf("mean %.3f  p5 %.3f  p50 %.3f  p95 %.3f  (n %d)", d.Mean, d.P5, d.P50, d.P95, d.N)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
