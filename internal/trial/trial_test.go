package trial

import (
	"math"
	"testing"
)

func TestEER(t *testing.T) {
	cases := []struct {
		name          string
		genuine, imp  []float64
		eer           float64
		threshold     float64
		frrAt, farAt  float64
		thresholdRate float64
	}{
		{"separated", []float64{3, 4, 5}, []float64{0, 1, 2}, 0, 3, 0, 0, 3},
		{"one swap", []float64{1.5, 3, 4, 5}, []float64{0, 1, 2, 2.5}, 0.25, 2.5, 0.25, 0.5, 2},
		{"identical", []float64{1, 1}, []float64{1, 1}, 1, 0, 0, 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eer, th := EER(tc.genuine, tc.imp)
			if math.Abs(eer-tc.eer) > 1e-12 || (tc.eer < 1 && th != tc.threshold) {
				t.Errorf("EER = %v at %v, want %v at %v", eer, th, tc.eer, tc.threshold)
			}
			frr, far := Rates(tc.genuine, tc.imp, tc.thresholdRate)
			if frr != tc.frrAt || far != tc.farAt {
				t.Errorf("Rates at %v = %v, %v; want %v, %v", tc.thresholdRate, frr, far, tc.frrAt, tc.farAt)
			}
		})
	}
}
