package eval

import (
	"math"
	"slices"
)

// FrameSeconds is the length of the frames (the pipeline's hops) that VAD
// decisions are scored on.
const FrameSeconds = 0.01

// AppendFrameLabels appends the ground truth of n consecutive 10 ms frames
// to dst: frame i is speech when its centre, (i + ½)·10 ms, lies in a
// segment [start, end). segs must be sorted by start (ParseSegments and
// ParseCallSegments sort them); they may overlap.
func AppendFrameLabels(dst []bool, segs []Segment, n int) []bool {
	j := 0
	for i := range n {
		t := (float64(i) + 0.5) * FrameSeconds
		for j < len(segs) && segs[j].End <= t {
			j++
		}
		speech := false
		for k := j; k < len(segs) && segs[k].Start <= t; k++ {
			if t < segs[k].End {
				speech = true
				break
			}
		}
		dst = append(dst, speech)
	}
	return dst
}

// Confusion counts frame decisions against the truth, speech positive.
type Confusion struct {
	TP, FP, FN, TN int64
}

// Add counts one frame.
func (c *Confusion) Add(truth, decision bool) {
	switch {
	case truth && decision:
		c.TP++
	case decision:
		c.FP++
	case truth:
		c.FN++
	default:
		c.TN++
	}
}

// Merge adds o's counts to c.
func (c *Confusion) Merge(o Confusion) {
	c.TP += o.TP
	c.FP += o.FP
	c.FN += o.FN
	c.TN += o.TN
}

// Precision is TP/(TP+FP): the share of frames called speech that are;
// 1 when nothing was called speech.
func (c Confusion) Precision() float64 { return ratio(c.TP, c.TP+c.FP) }

// Recall is TP/(TP+FN): the share of speech frames found; 1 when there
// was no speech.
func (c Confusion) Recall() float64 { return ratio(c.TP, c.TP+c.FN) }

// F1 is the harmonic mean of precision and recall, 2TP/(2TP+FP+FN); 1
// when there was no speech and none was found.
func (c Confusion) F1() float64 { return ratio(2*c.TP, 2*c.TP+c.FP+c.FN) }

func ratio(a, b int64) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// EER returns the equal error rate of a detector whose scores at or above a
// threshold accept: FRR(t) is the share of genuine scores below t, FAR(t)
// the share of impostor scores at or above t. Over the thresholds at every
// distinct score (and above them all) FRR rises and FAR falls; EER is where
// the two step curves cross, interpolated linearly between the last
// threshold with FRR < FAR and the first with FRR ≥ FAR, and threshold is
// that first one. Tied scores move together. It returns ErrNoScores when a
// list is empty.
func EER(genuine, impostor []float64) (eer, threshold float64, err error) {
	if len(genuine) == 0 || len(impostor) == 0 {
		return math.NaN(), math.NaN(), ErrNoScores
	}
	g := slices.Sorted(slices.Values(genuine))
	im := slices.Sorted(slices.Values(impostor))
	all := append(append(make([]float64, 0, len(g)+len(im)), g...), im...)
	slices.Sort(all)
	all = slices.Compact(all)
	all = append(all, math.Inf(1))
	prevFRR, prevFAR := 0.0, 1.0 // below every score
	for _, t := range all {
		frr, far := Rates(g, im, t)
		if frr >= far {
			d := (prevFAR - prevFRR) + (frr - far)
			if d == 0 {
				return frr, t, nil
			}
			a := (prevFAR - prevFRR) / d
			return prevFRR + a*(frr-prevFRR), t, nil
		}
		prevFRR, prevFAR = frr, far
	}
	return 1, math.Inf(1), nil // not reached: FRR = 1 ≥ FAR = 0 at +Inf
}

// Rates returns the false reject rate (genuine scores below t) and false
// accept rate (impostor scores at or above t). Both lists must be sorted
// in ascending order.
func Rates(genuine, impostor []float64, t float64) (frr, far float64) {
	below := func(s []float64) int {
		i, _ := slices.BinarySearch(s, t) // first index with s[i] >= t
		return i
	}
	frr = float64(below(genuine)) / float64(max(len(genuine), 1))
	far = float64(len(impostor)-below(impostor)) / float64(max(len(impostor), 1))
	return frr, far
}

// Distribution summarises a list of values.
type Distribution struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	P5   float64 `json:"p5"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	Max  float64 `json:"max"`
}

// Summarise returns the distribution of xs; percentiles interpolate
// linearly between order statistics (position p·(n−1)). An empty list
// gives N = 0 and zeros.
func Summarise(xs []float64) Distribution {
	if len(xs) == 0 {
		return Distribution{}
	}
	s := slices.Sorted(slices.Values(xs))
	var sum float64
	for _, x := range s {
		sum += x
	}
	return Distribution{N: len(s), Mean: sum / float64(len(s)), Min: s[0], Max: s[len(s)-1],
		P5: Percentile(s, 0.05), P50: Percentile(s, 0.5), P95: Percentile(s, 0.95)}
}

// Percentile returns the p-quantile (0 ≤ p ≤ 1) of the sorted list s,
// interpolating linearly between order statistics; NaN for an empty list.
func Percentile(s []float64, p float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	pos := p * float64(len(s)-1)
	i := int(math.Floor(pos))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	f := pos - float64(i)
	return s[i] + f*(s[i+1]-s[i])
}

// shareAtLeast returns the share of xs at or above t (0 for none).
func shareAtLeast(xs []float64, t float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	n := 0
	for _, x := range xs {
		if x >= t {
			n++
		}
	}
	return float64(n) / float64(len(xs))
}

// shareBelow returns the fraction of xs below t: 1 − shareAtLeast, and
// 0 for no xs.
func shareBelow(xs []float64, t float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return 1 - shareAtLeast(xs, t)
}
