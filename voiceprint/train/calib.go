package main

import (
	"fmt"
	"math"
	"sort"

	"github.com/earshot-voice/earshot/voiceprint"
	"github.com/earshot-voice/earshot/voiceprint/internal/corpus"
	"github.com/earshot-voice/earshot/voiceprint/internal/trial"
)

// calibrate fits, on the held-out calibration corpora, the logistic map of
// raw scores to similarities, the default threshold (at the EER point) and
// the authenticity parameters, and records what they measured there.
func calibrate(def *voiceprint.Definition, m voiceprint.Model, utts []corpus.Utterance) error {
	v, err := trial.Verify(m, utts, 10, 3)
	if err != nil {
		return err
	}
	eer, rawT := trial.EER(v.Genuine, v.Impostor)
	a, b := fitLogistic(v.Genuine, v.Impostor)
	def.CalibScale, def.CalibOffset = a, b
	def.Threshold = math.Round(logistic(a*rawT+b)*1000) / 1000
	logf("calibration: %d genuine, %d impostor trials, EER %.2f%% at raw %.4f; similarity = σ(%.3f·raw%+.3f), threshold %.3f",
		len(v.Genuine), len(v.Impostor), 100*eer, rawT, a, b, def.Threshold)

	sets, err := trial.Sets(utts, 20)
	if err != nil {
		return err
	}
	var genC, mixC, genL, loopL []float64
	for i := range sets {
		au, err := trial.Authenticity(m, &sets[i])
		if err != nil {
			return err
		}
		switch sets[i].Kind {
		case "genuine":
			genC = append(genC, au.Consistency)
			genL = append(genL, au.Loop)
		case "mix":
			mixC = append(mixC, au.Consistency)
		case "loop", "loop+noise":
			loopL = append(loopL, au.Loop)
		}
	}
	// Consistency: the operating point passes 97 % of the genuine
	// collections; mixes are rejected as far as that allows.
	ct := quantile(genC, 0.03)
	sc := 6 / math.Max(median(genC)-ct, 0.02)
	def.Auth.ConsistencySlope = round3(sc)
	def.Auth.ConsistencyMid = round3(ct - math.Log(4)/sc)
	// Loop: loops high, genuine low.
	lt := separate(loopL, genL)
	sl := 6 / math.Max(lt-median(genL), 0.02)
	def.Auth.LoopSlope = round3(sl)
	def.Auth.LoopMid = round3(lt + math.Log(4)/sl)
	var mixRej int
	for _, c := range mixC {
		if c < ct {
			mixRej++
		}
	}
	logf("authenticity: %d genuine, %d mixes, %d loops; consistency threshold %.3f (genuine median %.3f, mixes below %d/%d), loop threshold %.3f (genuine median %.3f)",
		len(genC), len(mixC), len(loopL), ct, median(genC), mixRej, len(mixC), lt, median(genL))
	def.Description = fmt.Sprintf("Telephone-band (300-3400 Hz) speaker model: %d-component diagonal GMM-UBM over %d-dim MFCC "+
		"(log energy, c1-c%d, deltas, delta-deltas), MAP-adapted means (r=%g), %d nuisance directions projected out, "+
		"expected log-likelihood-ratio scoring, logistic calibration. EER %.2f%% on a held-out synthetic training split "+
		"(10 s enrolment, %d genuine / %d impostor trials).",
		def.Components, def.Dim, def.Dim/3-1, def.Relevance, def.NuisanceRank, 100*eer, len(v.Genuine), len(v.Impostor))
	def.Measured = fmt.Sprintf("calibration split: EER %.2f%% (%d genuine, %d impostor trials, 10 s enrolment)",
		100*eer, len(v.Genuine), len(v.Impostor))
	return nil
}

func logistic(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

func median(v []float64) float64 { return quantile(v, 0.5) }

// quantile returns the value below which a fraction q of v lies.
func quantile(v []float64, q float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[int(q*float64(len(s)-1))]
}

// fitLogistic fits p(genuine | s) = σ(a·s + b) by Newton's method on the
// cross-entropy with the two classes weighted equally.
func fitLogistic(gen, imp []float64) (a, b float64) {
	a, b = 1, 0
	wg, wi := 0.5/float64(len(gen)), 0.5/float64(len(imp))
	for it := 0; it < 50; it++ {
		var ga, gb, haa, hab, hbb float64
		step := func(s, y, w float64) {
			p := logistic(a*s + b)
			ga += w * (p - y) * s
			gb += w * (p - y)
			h := w * p * (1 - p)
			haa += h * s * s
			hab += h * s
			hbb += h
		}
		for _, s := range gen {
			step(s, 1, wg)
		}
		for _, s := range imp {
			step(s, 0, wi)
		}
		det := haa*hbb - hab*hab
		if det <= 0 {
			break
		}
		da := (hbb*ga - hab*gb) / det
		db := (haa*gb - hab*ga) / det
		a -= da
		b -= db
		if math.Abs(da) < 1e-9 && math.Abs(db) < 1e-9 {
			break
		}
	}
	return a, b
}

// separate returns the threshold that best separates hi (meant to be at or
// above it) from lo (below): the one maximising the mean of the two
// correct-decision rates, and among equally good ones the middle of the
// widest gap between neighbouring values.
func separate(hi, lo []float64) float64 {
	all := append(append([]float64(nil), hi...), lo...)
	sort.Float64s(all)
	best, bestGap, t := -1.0, -1.0, 0.0
	for i := 1; i < len(all); i++ {
		c := (all[i-1] + all[i]) / 2
		var ph, pl float64
		for _, v := range hi {
			if v >= c {
				ph++
			}
		}
		for _, v := range lo {
			if v < c {
				pl++
			}
		}
		acc := (ph/float64(len(hi)) + pl/float64(len(lo))) / 2
		gap := all[i] - all[i-1]
		if acc > best+1e-12 || (math.Abs(acc-best) <= 1e-12 && gap > bestGap) {
			best, bestGap, t = acc, gap, c
		}
	}
	return t
}

func loadAll(dirs []string) ([]corpus.Utterance, error) {
	var utts []corpus.Utterance
	for _, d := range dirs {
		us, err := load(d)
		if err != nil {
			return nil, err
		}
		utts = append(utts, us...)
	}
	return utts, nil
}
