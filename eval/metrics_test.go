package eval

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestAppendFrameLabels(t *testing.T) {
	tests := []struct {
		name string
		segs []Segment
		n    int
		want string // 1 speech, 0 not
	}{
		{"no segments", nil, 4, "0000"},
		{"whole frames", []Segment{{0.02, 0.05}}, 7, "0011100"},
		// Centres are at 5, 15, 25 ms…: a segment from 4 to 16 ms holds
		// two centres, one from 6 to 14 ms none.
		{"centre rule", []Segment{{0.004, 0.016}}, 3, "110"},
		{"no centre inside", []Segment{{0.006, 0.014}}, 3, "000"},
		{"end is exclusive", []Segment{{0.0, 0.015}}, 3, "100"},
		{"two segments", []Segment{{0.00, 0.02}, {0.04, 0.06}}, 7, "1100110"},
		{"overlapping", []Segment{{0.00, 0.05}, {0.01, 0.03}}, 6, "111110"},
		{"nested long first", []Segment{{0.00, 0.08}, {0.01, 0.02}}, 9, "111111110"},
		{"beyond the audio", []Segment{{0.03, 9}}, 5, "00011"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendFrameLabels(nil, tt.segs, tt.n)
			s := make([]byte, len(got))
			for i, v := range got {
				s[i] = '0'
				if v {
					s[i] = '1'
				}
			}
			if string(s) != tt.want {
				t.Errorf("labels = %s, want %s", s, tt.want)
			}
		})
	}
}

func TestConfusion(t *testing.T) {
	tests := []struct {
		name            string
		truth, decision string
		p, r, f1        float64
	}{
		{"perfect", "0110", "0110", 1, 1, 1},
		{"all missed", "0110", "0000", 1, 0, 0},
		{"all false alarms", "0000", "1111", 0, 1, 0},
		{"nothing to find", "0000", "0000", 1, 1, 1},
		// TP 2, FP 1, FN 1: P 2/3, R 2/3, F1 2/3.
		{"mixed", "11100", "01110", 2.0 / 3, 2.0 / 3, 2.0 / 3},
		// TP 1, FP 3, FN 0: P 1/4, R 1, F1 2/5.
		{"over-eager", "0100", "1111", 0.25, 1, 0.4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Confusion
			for i := range tt.truth {
				c.Add(tt.truth[i] == '1', tt.decision[i] == '1')
			}
			if n := c.TP + c.FP + c.FN + c.TN; n != int64(len(tt.truth)) {
				t.Fatalf("counted %d frames, want %d", n, len(tt.truth))
			}
			for _, g := range []struct {
				name      string
				got, want float64
			}{{"precision", c.Precision(), tt.p}, {"recall", c.Recall(), tt.r}, {"F1", c.F1(), tt.f1}} {
				if math.Abs(g.got-g.want) > 1e-12 {
					t.Errorf("%s = %v, want %v", g.name, g.got, g.want)
				}
			}
			var m Confusion
			m.Merge(c)
			m.Merge(c)
			if m.TP != 2*c.TP || m.FP != 2*c.FP || m.FN != 2*c.FN || m.TN != 2*c.TN || m.F1() != c.F1() {
				t.Errorf("Merge twice = %+v from %+v", m, c)
			}
		})
	}
}

func TestEER(t *testing.T) {
	tests := []struct {
		name              string
		genuine, impostor []float64
		eer, threshold    float64
		wantErr           error
	}{
		{name: "separated", genuine: []float64{3, 4}, impostor: []float64{1, 2}, eer: 0, threshold: 3},
		{name: "separated with a gap at threshold", genuine: []float64{0.9, 0.8}, impostor: []float64{0.1, 0.3, 0.2}, eer: 0, threshold: 0.8},
		{name: "reversed", genuine: []float64{1, 2}, impostor: []float64{3, 4}, eer: 1, threshold: 3},
		// Every threshold accepts all or nothing: FRR 0, FAR 1 at t = 1;
		// FRR 1, FAR 0 above: they cross half-way.
		{name: "all tied", genuine: []float64{1, 1}, impostor: []float64{1, 1}, eer: 0.5, threshold: math.Inf(1)},
		// t = 2.7: FRR 1/4, FAR 1/2; t = 3: FRR 1/4, FAR 0. FRR is flat
		// at 1/4 while FAR falls through it: EER 1/4.
		{name: "one impostor above one genuine", genuine: []float64{2.5, 3, 4, 5}, impostor: []float64{1, 2.7}, eer: 0.25, threshold: 3},
		// Ties across the lists: at t = 2 FRR 0, FAR 2/3 (both impostors
		// at 2 accepted); at t = 3 FRR 1/2, FAR 0. Linear interpolation
		// meets at α = (2/3)/(2/3 + 1/2) = 4/7: EER 4/7 · 1/2 = 2/7.
		{name: "tie between a genuine and impostors", genuine: []float64{2, 3}, impostor: []float64{1, 2, 2}, eer: 2.0 / 7, threshold: 3},
		// One genuine tied with one impostor: t = 5: FRR 0, FAR 1/2;
		// t = 9: FRR 1/2, FAR 0; α = ½: EER 1/4.
		{name: "single tie", genuine: []float64{5, 9}, impostor: []float64{0, 5}, eer: 0.25, threshold: 9},
		{name: "no genuine", impostor: []float64{1}, wantErr: ErrNoScores},
		{name: "no impostor", genuine: []float64{1}, wantErr: ErrNoScores},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, im := slices.Clone(tt.genuine), slices.Clone(tt.impostor)
			eer, th, err := EER(tt.genuine, tt.impostor)
			if !slices.Equal(g, tt.genuine) || !slices.Equal(im, tt.impostor) {
				t.Error("EER reordered its inputs")
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if math.Abs(eer-tt.eer) > 1e-12 {
				t.Errorf("EER = %v, want %v", eer, tt.eer)
			}
			if th != tt.threshold {
				t.Errorf("threshold = %v, want %v", th, tt.threshold)
			}
		})
	}
}

func TestEERInvariantToOrderAndShift(t *testing.T) {
	g := []float64{0.9, 0.4, 0.8, 0.7, 0.95, 0.3}
	im := []float64{0.1, 0.5, 0.2, 0.45, 0.05, 0.35, 0.6}
	want, _, err := EER(g, im)
	if err != nil {
		t.Fatal(err)
	}
	rg, rim := slices.Clone(g), slices.Clone(im)
	slices.Reverse(rg)
	slices.Reverse(rim)
	for i := range rg {
		rg[i] = 10*rg[i] - 3 // monotonic: same ranking
	}
	for i := range rim {
		rim[i] = 10*rim[i] - 3
	}
	got, _, err := EER(rg, rim)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-want) > 1e-12 {
		t.Errorf("EER after a monotonic map and reordering = %v, want %v", got, want)
	}
	if want <= 0 || want >= 0.5 {
		t.Errorf("EER = %v, want strictly between 0 and 0.5 for overlapping lists", want)
	}
}

func TestRates(t *testing.T) {
	g := []float64{0.2, 0.5, 0.5, 0.9}
	im := []float64{0.1, 0.4, 0.5, 0.6}
	tests := []struct {
		t        float64
		frr, far float64
	}{
		{0, 0, 1},
		{0.5, 0.25, 0.5}, // accept at or above: 0.5 genuine accepted, 0.5 impostor accepted
		{0.55, 0.75, 0.25},
		{1, 1, 0},
	}
	for _, tt := range tests {
		frr, far := Rates(g, im, tt.t)
		if frr != tt.frr || far != tt.far {
			t.Errorf("Rates at %v = %v, %v, want %v, %v", tt.t, frr, far, tt.frr, tt.far)
		}
	}
}

func TestSummarise(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want Distribution
	}{
		{"empty", nil, Distribution{}},
		{"one", []float64{3}, Distribution{N: 1, Mean: 3, Min: 3, P5: 3, P50: 3, P95: 3, Max: 3}},
		// 0..20: p5 at position 1, p50 at 10, p95 at 19.
		{"ramp", ramp(21), Distribution{N: 21, Mean: 10, Min: 0, P5: 1, P50: 10, P95: 19, Max: 20}},
		// 0, 10: p5 at position 0.05 → 0.5, p50 → 5, p95 → 9.5.
		{"interpolated", []float64{10, 0}, Distribution{N: 2, Mean: 5, Min: 0, P5: 0.5, P50: 5, P95: 9.5, Max: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarise(tt.xs)
			if math.Abs(got.P5-tt.want.P5) > 1e-12 || math.Abs(got.P95-tt.want.P95) > 1e-12 {
				t.Errorf("Summarise = %+v, want %+v", got, tt.want)
			}
			got.P5, got.P95 = tt.want.P5, tt.want.P95
			if got != tt.want {
				t.Errorf("Summarise = %+v, want %+v", got, tt.want)
			}
		})
	}
	if !math.IsNaN(Percentile(nil, 0.5)) {
		t.Error("Percentile of nothing is not NaN")
	}
}

func ramp(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(n - 1 - i)
	}
	return out
}

func TestPartners(t *testing.T) {
	// Speakers a and c share a base voice: never each other's partner.
	r := &runner{spks: []string{"a", "b", "c", "d", "e"}, base: []string{"x", "y", "x", "z", "w"}}
	cases := []struct {
		spk  int
		want []int
	}{
		{0, []int{1, 3, 4}},
		{1, []int{2, 3, 4, 0}},
		{2, []int{3, 4, 1}},
		{4, []int{0, 1, 2, 3}},
	}
	for _, tc := range cases {
		if got := r.partners(tc.spk); !slices.Equal(got, tc.want) {
			t.Errorf("partners(%s) = %v, want %v (every other base voice, in name order from it, wrapping)", r.spks[tc.spk], got, tc.want)
		}
	}
}

func TestShares(t *testing.T) {
	tests := []struct {
		name           string
		xs             []float64
		t              float64
		atLeast, below float64
	}{
		{"none", nil, 0.5, 0, 0},
		{"all above", []float64{0.9, 1}, 0.5, 1, 0},
		{"all below", []float64{0, 0.1}, 0.5, 0, 1},
		{"at the threshold counts as at least", []float64{0.5, 0.4, 0.6, 0.1}, 0.5, 0.5, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := shareAtLeast(tc.xs, tc.t); got != tc.atLeast {
				t.Errorf("shareAtLeast = %v, want %v", got, tc.atLeast)
			}
			if got := shareBelow(tc.xs, tc.t); got != tc.below {
				t.Errorf("shareBelow = %v, want %v", got, tc.below)
			}
		})
	}
}
