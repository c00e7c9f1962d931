package replay

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"
)

func TestBucketBounds(t *testing.T) {
	// Every bucket's range starts right after the previous one's, and
	// bucketOf maps both ends back to it.
	var next uint64
	for i := range histBuckets {
		lo, hi := bucketBounds(i)
		if lo != next || hi < lo {
			t.Fatalf("bucket %d is [%d, %d], want it to start at %d", i, lo, hi, next)
		}
		if bucketOf(lo) != i || bucketOf(hi) != i {
			t.Fatalf("bucket %d: bucketOf(%d)=%d, bucketOf(%d)=%d", i, lo, bucketOf(lo), hi, bucketOf(hi))
		}
		if lo >= histSubBuckets && float64(hi-lo+1)/float64(lo) > 1.0/histSubBuckets+1e-12 {
			t.Fatalf("bucket %d is %d wide at %d: wider than 1/%d", i, hi-lo+1, lo, histSubBuckets)
		}
		next = hi + 1
	}
	if next != 0 {
		t.Fatalf("the last bucket ends at %d, not at the top of uint64", next-1)
	}
}

// TestHistogramQuantiles compares the histogram's percentiles with the
// exact order statistics of the same samples.
func TestHistogramQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func(n int, f func() time.Duration) []time.Duration {
		s := make([]time.Duration, n)
		for i := range s {
			s[i] = f()
		}
		return s
	}
	tests := []struct {
		name    string
		samples []time.Duration
	}{
		{"one value", []time.Duration{3 * time.Millisecond}},
		{"constant", gen(1000, func() time.Duration { return 1234567 })},
		{"uniform 0-100 ms", gen(20000, func() time.Duration { return time.Duration(rng.Int64N(int64(100 * time.Millisecond))) })},
		{"exponential, mean 2 ms", gen(20000, func() time.Duration { return time.Duration(rng.ExpFloat64() * 2e6) })},
		{"bimodal with a tail", gen(20000, func() time.Duration {
			switch r := rng.Float64(); {
			case r < 0.7:
				return time.Duration(200e3 + rng.Int64N(50e3))
			case r < 0.995:
				return time.Duration(5e6 + rng.Int64N(1e6))
			default:
				return time.Duration(2e9 + rng.Int64N(1e9))
			}
		})},
		{"nanoseconds", gen(5000, func() time.Duration { return time.Duration(rng.Int64N(40)) })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Histogram
			for _, v := range tt.samples {
				h.Record(v)
			}
			sorted := slices.Clone(tt.samples)
			slices.Sort(sorted)
			var sum time.Duration
			for _, v := range sorted {
				sum += v
			}
			if h.Count() != uint64(len(sorted)) || h.Max() != sorted[len(sorted)-1] || h.Mean() != sum/time.Duration(len(sorted)) {
				t.Fatalf("count %d max %v mean %v; want %d %v %v", h.Count(), h.Max(), h.Mean(), len(sorted), sorted[len(sorted)-1], sum/time.Duration(len(sorted)))
			}
			for _, q := range []float64{0.5, 0.9, 0.99, 0.999, 1} {
				exact := sorted[int(math.Ceil(q*float64(len(sorted))))-1]
				got := h.Quantile(q)
				tol := max(0.032*float64(exact), 1)
				if math.Abs(float64(got-exact)) > tol {
					t.Errorf("q%.3f = %v, exact %v: off by more than 3.2%%", q, got, exact)
				}
				if got > h.Max() {
					t.Errorf("q%.3f = %v beyond the max %v", q, got, h.Max())
				}
			}
		})
	}
}

func TestHistogramEmptyAndNegative(t *testing.T) {
	var h Histogram
	if h.Quantile(0.99) != 0 || h.Mean() != 0 || h.Max() != 0 {
		t.Error("an empty histogram reports values")
	}
	h.Record(-time.Second)
	if h.Count() != 1 || h.Max() != 0 || h.Quantile(0.5) != 0 {
		t.Errorf("a negative value: count %d max %v", h.Count(), h.Max())
	}
}

// TestHistogramConcurrent records from many goroutines at once (run with
// -race) and loses nothing; Record allocates nothing and the histogram's
// size is fixed.
func TestHistogramConcurrent(t *testing.T) {
	var h Histogram
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				h.Record(time.Duration(g*1000+i) * time.Microsecond)
			}
		})
	}
	wg.Wait()
	if h.Count() != 8000 || h.Max() != 7999*time.Microsecond {
		t.Fatalf("count %d, max %v", h.Count(), h.Max())
	}
	if allocs := testing.AllocsPerRun(1000, func() { h.Record(5 * time.Millisecond) }); allocs != 0 {
		t.Errorf("Record allocates %.1f times", allocs)
	}
	if size := unsafe.Sizeof(h); size > 8<<10 {
		t.Errorf("a histogram takes %d bytes", size)
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	var h Histogram
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		d := time.Duration(0)
		for pb.Next() {
			d += 997
			h.Record(d)
		}
	})
}
