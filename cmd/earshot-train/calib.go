package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/earshot-voice/earshot/eval"
	"github.com/earshot-voice/earshot/internal/corpus"
	"github.com/earshot-voice/earshot/internal/trial"
	"github.com/earshot-voice/earshot/voiceprint"
)

// calibrate fits, on the held-out calibration corpora, the logistic map of
// raw scores to similarities, the default threshold (at the EER
// point) and the authenticity parameters, and records what they measured
// there. The corpora are measured as earshot eval measures dev (package
// eval): through the live pipeline, VAD included, with 10 s enrolments
// and 10 s authenticity collections, so that the calibration fits the
// scores the service computes.
//
// The corpora may hold real and synthetic voices. Real callers are what
// the model is for, and they differ from synthetic voices far more from
// one sentence to the next, so where the corpora hold real voices the
// default threshold is the equal-error point of the real-voice trials, the
// speaker factor weighs the real and the synthetic collections equally,
// and its operating point passes 97 % of the genuine collections of each
// source.
//
// The authenticity parameters are fitted on the collections of the corpora
// in authDirs only (every corpus when it is empty).
func calibrate(ctx context.Context, def *voiceprint.Definition, m voiceprint.Model, dirs, authDirs []string) error {
	var gen, imp, genReal, impReal, genL, loopL []float64
	var genCP, mixCP [][]float64 // speakerFeatures
	var genSrc, mixSrc []string  // their sources
	for _, dir := range dirs {
		c, err := eval.Load(dir)
		if err != nil {
			return err
		}
		if err := checkSplit(dir, c); err != nil {
			return err
		}
		rep, err := eval.Run(ctx, c, eval.Options{Model: m})
		if err != nil {
			return fmt.Errorf("calibration corpus %s: %w", dir, err)
		}
		if len(authDirs) > 0 && !slices.Contains(authDirs, dir) {
			rep.Auth.Collections = nil
		} else {
			// Authenticity collections of 20 s too, so that the speaker
			// factor learns how consistency grows with the voice compared.
			rep20, err := eval.Run(ctx, c, eval.Options{Model: m, EnrolSeconds: 20})
			if err != nil {
				return fmt.Errorf("calibration corpus %s: %w", dir, err)
			}
			rep.Auth.Collections = append(rep.Auth.Collections, rep20.Auth.Collections...)
		}
		for _, t := range rep.Trials {
			switch {
			case t.Genuine:
				gen = append(gen, t.Raw)
			default:
				imp = append(imp, t.Raw)
			}
			switch {
			case t.Source == "real" && t.Genuine:
				genReal = append(genReal, t.Raw)
			case t.Source == "real":
				impReal = append(impReal, t.Raw)
			}
		}
		for _, a := range rep.Auth.Collections {
			switch a.Kind {
			case "genuine":
				genCP = append(genCP, speakerFeatures(a))
				genSrc = append(genSrc, a.Source)
				genL = append(genL, a.Loop)
			case "mix":
				mixCP = append(mixCP, speakerFeatures(a))
				mixSrc = append(mixSrc, a.Source)
			case "loop":
				loopL = append(loopL, a.Loop)
			}
		}
	}
	if len(gen) == 0 || len(imp) == 0 || len(genCP) == 0 || len(mixCP) == 0 || len(loopL) == 0 {
		return errors.New("calibration corpora gave no trials or collections")
	}
	eer, rawT := trial.EER(gen, imp)
	a, b := fitLogistic(gen, imp)
	def.CalibScale, def.CalibOffset = a, b
	logf("calibration: %d genuine, %d impostor trials, EER %.2f%% at raw score %.4f; similarity = σ(%.3f·raw%+.3f)",
		len(gen), len(imp), 100*eer, rawT, a, b)
	if len(genReal) > 0 && len(impReal) > 0 {
		var eerReal float64
		eerReal, rawT = trial.EER(genReal, impReal)
		logf("calibration, real voices: %d genuine, %d impostor trials, EER %.2f%% at raw score %.4f",
			len(genReal), len(impReal), 100*eerReal, rawT)
	}
	def.Threshold = math.Round(logistic(a*rawT+b)*1000) / 1000
	logf("default threshold %.3f", def.Threshold)

	// Speaker factor: a logistic regression of genuine against mixes on
	// consistency c, pitch shift Δ (in units of its spread), and c·ℓ and ℓ
	// with ℓ = ln(voice/10 s)
	// (collections of two lengths; classes weighted equally) gives the
	// direction z = w·x + b; the operating point passes 97 % of the
	// genuine collections, and the slope puts their median near 1.
	w, b0 := fitLogisticN(genCP, mixCP, sourceWeights(genSrc), sourceWeights(mixSrc))
	if w[0] <= 0 {
		return fmt.Errorf("calibration: consistency does not separate genuine from mixed collections (weight %.3f)", w[0])
	}
	w[1] = math.Min(w[1], 0) // a larger pitch shift never makes a collection more genuine
	z := func(x []float64) float64 {
		s := b0
		for i, v := range x {
			s += w[i] * v
		}
		return s
	}
	var genZ []float64
	for _, x := range genCP {
		genZ = append(genZ, z(x))
	}
	zt := math.Inf(1)
	for _, src := range distinct(genSrc) {
		var z []float64
		for i, s := range genSrc {
			if s == src {
				z = append(z, genZ[i])
			}
		}
		zt = math.Min(zt, quantile(z, 0.03))
	}
	k := 6 / math.Max(median(genZ)-zt, 0.02)
	def.Auth.ConsistencySlope = round3(k * w[0])
	def.Auth.PitchSlope = round3(-k * w[1])
	def.Auth.ConsistencyVoiceSlope = round3(k * w[2])
	def.Auth.VoiceSlope = round3(k * w[3])
	def.Auth.ConsistencyMid = round3(-(k*(b0-zt) + math.Log(4)) / (k * w[0]))
	// Loop: loops high, genuine low.
	lt := separate(loopL, genL)
	sl := 6 / math.Max(lt-median(genL), 0.02)
	def.Auth.LoopSlope = round3(sl)
	def.Auth.LoopMid = round3(lt + math.Log(4)/sl)
	var mixRej int
	for _, x := range mixCP {
		if z(x) < zt {
			mixRej++
		}
	}
	logf("authenticity: %d genuine, %d mixes, %d loops; speaker factor %+v (mixes below the genuine 3rd percentile %d/%d), loop threshold %.3f (genuine median %.3f)",
		len(genCP), len(mixCP), len(loopL), def.Auth, mixRej, len(mixCP), lt, median(genL))
	def.Description = fmt.Sprintf("Telephone-band (300-3400 Hz) speaker model: %d-component diagonal GMM-UBM over %d-dim MFCC "+
		"(log energy, c1-c%d, deltas, delta-deltas), MAP-adapted means (r=%g), %d nuisance directions projected out, "+
		"expected log-likelihood-ratio scoring, logistic calibration. EER %.2f%% on a held-out synthetic training split "+
		"(10 s enrolment through the service's pipeline, %d genuine / %d impostor trials).",
		def.Components, def.Dim, def.Dim/3-1, def.Relevance, def.NuisanceRank, 100*eer, len(gen), len(imp))
	def.Measured = fmt.Sprintf("calibration split: EER %.2f%% (%d genuine, %d impostor trials, 10 s enrolment, live pipeline)",
		100*eer, len(gen), len(imp))
	return nil
}

// speakerFeatures are the inputs of the speaker factor (see
// voiceprint.AuthParams): c, Δ (the pitch shift in units of its spread),
// c·ℓ, ℓ with ℓ = ln(voice/10 s).
func speakerFeatures(a eval.AuthCollection) []float64 {
	l := math.Log(math.Max(a.VoiceSeconds, 1) / 10)
	return []float64{a.Consistency, a.PitchShiftZ, a.Consistency * l, l}
}

// checkSplit refuses a dev or eval corpus.
func checkSplit(dir string, c *eval.Corpus) error {
	for _, u := range c.Utterances {
		if u.Split == "dev" || u.Split == "eval" {
			return fmt.Errorf("%s: split %q must not calibrate a model", dir, u.Split)
		}
	}
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

// sourceWeights weighs samples so that each source (real, synthetic)
// counts as much as every other, whatever its number of samples; the
// weights sum to 1.
func sourceWeights(src []string) []float64 {
	n := map[string]int{}
	for _, s := range src {
		n[s]++
	}
	w := make([]float64, len(src))
	for i, s := range src {
		w[i] = 1 / float64(len(n)*n[s])
	}
	return w
}

// distinct returns the distinct values of v, sorted.
func distinct(v []string) []string {
	out := append([]string(nil), v...)
	sort.Strings(out)
	return slices.Compact(out)
}

// fitLogisticN fits p(genuine | x) = σ(w·x + b) by Newton's method on the
// cross-entropy with a small ridge (10⁻⁶) on w. The samples are weighted
// by wGen and wOther (each summing to 1: the two classes weigh equally).
func fitLogisticN(gen, other [][]float64, wGen, wOther []float64) (w []float64, b float64) {
	n := len(gen[0])
	w = make([]float64, n)
	for it := 0; it < 100; it++ {
		g := make([]float64, n+1)
		h := make([][]float64, n+1)
		for i := range h {
			h[i] = make([]float64, n+1)
		}
		step := func(x []float64, y, wt float64) {
			f := append(append([]float64(nil), x...), 1)
			z := b
			for i, v := range x {
				z += w[i] * v
			}
			p := logistic(z)
			for i := range f {
				g[i] += wt * (p - y) * f[i]
				for j := range f {
					h[i][j] += wt * p * (1 - p) * f[i] * f[j]
				}
			}
		}
		for i, x := range gen {
			step(x, 1, 0.5*wGen[i])
		}
		for i, x := range other {
			step(x, 0, 0.5*wOther[i])
		}
		for i := 0; i < n; i++ {
			g[i] += 1e-6 * w[i]
			h[i][i] += 1e-6
		}
		d, ok := solve(h, g)
		if !ok {
			break
		}
		var moved float64
		for i := 0; i < n; i++ {
			w[i] -= d[i]
			moved += math.Abs(d[i])
		}
		b -= d[n]
		if moved+math.Abs(d[n]) < 1e-10 {
			break
		}
	}
	return w, b
}

// solve solves a·x = y (a square) by Gaussian elimination with partial
// pivoting; a and y are overwritten.
func solve(a [][]float64, y []float64) ([]float64, bool) {
	n := len(y)
	for i := 0; i < n; i++ {
		p := i
		for r := i + 1; r < n; r++ {
			if math.Abs(a[r][i]) > math.Abs(a[p][i]) {
				p = r
			}
		}
		a[i], a[p] = a[p], a[i]
		y[i], y[p] = y[p], y[i]
		if math.Abs(a[i][i]) < 1e-300 {
			return nil, false
		}
		for r := i + 1; r < n; r++ {
			f := a[r][i] / a[i][i]
			for c := i; c < n; c++ {
				a[r][c] -= f * a[i][c]
			}
			y[r] -= f * y[i]
		}
	}
	x := make([]float64, n)
	for i := n - 1; i >= 0; i-- {
		s := y[i]
		for c := i + 1; c < n; c++ {
			s -= a[i][c] * x[c]
		}
		x[i] = s / a[i][i]
	}
	return x, true
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
