package features

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestLogPositive(t *testing.T) {
	cases := []float64{
		powerFloor, 0.0123, 0.5, 1 / math.Sqrt2, math.Nextafter(math.Sqrt2, 0), math.Sqrt2,
		math.Nextafter(math.Sqrt2, 3), 1, 2, 3, math.E, 1000, 32768 * 32768, 4.3e11, 1e300,
	}
	r := rand.New(rand.NewPCG(1, 1))
	for range 10000 {
		cases = append(cases, math.Exp(r.Float64()*40-5))
	}
	for _, x := range cases {
		got, want := logPositive(x), math.Log(x)
		if math.Abs(got-want) > 3e-11 {
			t.Fatalf("logPositive(%g) = %.17g, want %.17g", x, got, want)
		}
	}
}

func BenchmarkLog(b *testing.B) {
	xs := make([]float64, 24)
	for i := range xs {
		xs[i] = 0.01 + float64(i*i*i*100)
	}
	ys := make([]float64, len(xs))
	b.Run("logPositive", func(b *testing.B) {
		for b.Loop() {
			for i, x := range xs {
				ys[i] = logPositive(x)
			}
		}
	})
	b.Run("math.Log", func(b *testing.B) {
		for b.Loop() {
			for i, x := range xs {
				ys[i] = math.Log(x)
			}
		}
	})
}
