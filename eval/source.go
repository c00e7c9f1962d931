package eval

import "slices"

// SourceVerify is the speaker-verification outcome of a set of trials: all
// of them, or those whose enrolment and test speaker are both of one
// source.
type SourceVerify struct {
	// EER (0–1) and the calibrated score at it; nil without genuine or
	// impostor trials.
	EER            *float64 `json:"eer"`
	EERThreshold   *float64 `json:"eer_threshold"`
	GenuineTrials  int      `json:"genuine_trials"`
	ImpostorTrials int      `json:"impostor_trials"`
	// At the model's default similarity threshold.
	FalseRejectRate float64 `json:"false_reject_rate"`
	FalseAcceptRate float64 `json:"false_accept_rate"`
}

// SourceAuth is the authenticity outcome of the collections whose
// speakers are all of one source.
type SourceAuth struct {
	GenuinePassRate float64 `json:"genuine_pass_rate"`
	MixRejectRate   float64 `json:"mix_reject_rate"`
	LoopRejectRate  float64 `json:"loop_reject_rate"`
	// The collections behind each rate.
	Genuine int `json:"genuine"`
	Mixes   int `json:"mixes"`
	Loops   int `json:"loops"`
}

// commonSource is the source a trial or a mix of speakers with sources a
// and b belongs to: their common source, or "" (none) when they differ or
// either is unknown.
func commonSource(a, b string) string {
	if a != b {
		return ""
	}
	return a
}

// verifyFigures measures trials: the EER over their raw scores, and the
// false reject and accept rates of their calibrated scores at threshold.
// The EER is taken over the raw scores because the calibration, though
// monotonic, rounds the highest scores to exactly 1 in floating point, and
// ties there would blur the error rates around the crossing; EERThreshold
// is the calibrated score of the trial at the raw crossing.
func verifyFigures(trials []Trial, threshold float64) SourceVerify {
	var gen, imp, genRaw, impRaw []float64
	scoreOf := map[float64]float64{}
	for _, t := range trials {
		if t.Genuine {
			gen, genRaw = append(gen, t.Score), append(genRaw, t.Raw)
		} else {
			imp, impRaw = append(imp, t.Score), append(impRaw, t.Raw)
		}
		scoreOf[t.Raw] = t.Score
	}
	v := SourceVerify{GenuineTrials: len(gen), ImpostorTrials: len(imp)}
	eer, t, err := EER(genRaw, impRaw)
	if err != nil {
		return v
	}
	v.EER = &eer
	if s, ok := scoreOf[t]; ok {
		v.EERThreshold = &s
	}
	slices.Sort(gen)
	slices.Sort(imp)
	v.FalseRejectRate, v.FalseAcceptRate = Rates(gen, imp, threshold)
	return v
}

// verifyBySource measures the trials of each source (Trial.Source); the
// trials of no source count in none.
func verifyBySource(trials []Trial, threshold float64) map[string]SourceVerify {
	bySrc := map[string][]Trial{}
	for _, t := range trials {
		if t.Source != "" {
			bySrc[t.Source] = append(bySrc[t.Source], t)
		}
	}
	out := map[string]SourceVerify{}
	for src, ts := range bySrc {
		out[src] = verifyFigures(ts, threshold)
	}
	return out
}

// authBySource splits the collections by source and measures each
// source's pass and reject rates at threshold; collections of no source
// count in none.
func authBySource(cols []AuthCollection, threshold float64) map[string]SourceAuth {
	byKind := map[string]map[string][]float64{"genuine": {}, "mix": {}, "loop": {}}
	for _, c := range cols {
		if c.Source == "" || byKind[c.Kind] == nil {
			continue
		}
		byKind[c.Kind][c.Source] = append(byKind[c.Kind][c.Source], c.Score)
	}
	out := map[string]SourceAuth{}
	for _, src := range sourcesOf(byKind["genuine"], byKind["mix"], byKind["loop"]) {
		g, m, l := byKind["genuine"][src], byKind["mix"][src], byKind["loop"][src]
		out[src] = SourceAuth{
			GenuinePassRate: shareAtLeast(g, threshold), MixRejectRate: shareBelow(m, threshold),
			LoopRejectRate: shareBelow(l, threshold), Genuine: len(g), Mixes: len(m), Loops: len(l),
		}
	}
	return out
}

// sourcesOf returns the keys of the maps, sorted, each once.
func sourcesOf(ms ...map[string][]float64) []string {
	var keys []string
	for _, m := range ms {
		for k := range m {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}
