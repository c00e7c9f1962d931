package eval

import (
	"math"
	"slices"
)

// SourceVerify is the speaker-verification outcome of the trials whose
// enrolment and test speaker are both of one source.
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

// sourcedTrial is a trial's score with the source it belongs to.
type sourcedTrial struct {
	source  string
	genuine bool
	score   float64
}

// verifyBySource splits the trials by source and measures each source's
// share at threshold; trials of no source count in none.
func verifyBySource(trials []sourcedTrial, threshold float64) map[string]SourceVerify {
	gen, imp := map[string][]float64{}, map[string][]float64{}
	for _, t := range trials {
		if t.source == "" {
			continue
		}
		if t.genuine {
			gen[t.source] = append(gen[t.source], t.score)
		} else {
			imp[t.source] = append(imp[t.source], t.score)
		}
	}
	out := map[string]SourceVerify{}
	for _, src := range sourcesOf(gen, imp) {
		g, im := slices.Sorted(slices.Values(gen[src])), slices.Sorted(slices.Values(imp[src]))
		v := SourceVerify{GenuineTrials: len(g), ImpostorTrials: len(im)}
		if eer, t, err := EER(g, im); err == nil {
			v.EER = &eer
			if !math.IsInf(t, 0) {
				v.EERThreshold = &t
			}
			v.FalseRejectRate, v.FalseAcceptRate = Rates(g, im, threshold)
		}
		out[src] = v
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
