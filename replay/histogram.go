package replay

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// Histogram layout: values (nanoseconds) below 2^histSubBits have a bucket
// each; above, every power of two is split into 2^histSubBits buckets of
// equal width, so a bucket is at most 1/16 = 6.25 % of its lower bound wide
// and the middle of a bucket is within 3.2 % of any value in it. 976
// buckets cover every uint64, whatever the run measures.
const (
	histSubBits    = 4
	histSubBuckets = 1 << histSubBits
	histBuckets    = (64-histSubBits)*histSubBuckets + histSubBuckets
)

// Histogram counts durations in fixed logarithmic buckets. Its memory is
// fixed (about 8 KB) however many values it records, which is what lets a
// run of thousands of calls for hours keep percentiles of every pong.
// Record may be called from any number of goroutines at once; it takes
// no lock and allocates nothing.
type Histogram struct {
	count   atomic.Uint64
	sum     atomic.Uint64 // nanoseconds
	max     atomic.Uint64
	buckets [histBuckets]atomic.Uint64
}

// bucketOf is the index of the bucket that holds v.
func bucketOf(v uint64) int {
	if v < histSubBuckets {
		return int(v)
	}
	shift := bits.Len64(v) - 1 - histSubBits
	return (shift+1)<<histSubBits + int((v>>shift)&(histSubBuckets-1))
}

// bucketBounds is the range [lo, hi] of values in bucket i.
func bucketBounds(i int) (lo, hi uint64) {
	if i < histSubBuckets {
		return uint64(i), uint64(i)
	}
	shift := i>>histSubBits - 1
	lo = (histSubBuckets | uint64(i&(histSubBuckets-1))) << shift
	return lo, lo + (1 << shift) - 1
}

// Record adds one duration; a negative one counts as zero.
func (h *Histogram) Record(d time.Duration) {
	v := uint64(max(d, 0))
	h.buckets[bucketOf(v)].Add(1)
	h.count.Add(1)
	h.sum.Add(v)
	for {
		m := h.max.Load()
		if v <= m || h.max.CompareAndSwap(m, v) {
			return
		}
	}
}

// Count is the number of values recorded.
func (h *Histogram) Count() uint64 { return h.count.Load() }

// Max is the largest value recorded, exactly.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max.Load()) }

// Mean is the mean of the values recorded, exactly.
func (h *Histogram) Mean() time.Duration {
	n := h.count.Load()
	if n == 0 {
		return 0
	}
	return time.Duration(h.sum.Load() / n)
}

// Quantile returns the value at quantile q (0 < q ≤ 1): the middle of the
// bucket that holds the ⌈q·n⌉-th smallest value, never more than Max. It
// is within 3.2 % of the exact order statistic. With nothing recorded it
// returns 0. Values recorded while Quantile runs may or may not count.
func (h *Histogram) Quantile(q float64) time.Duration {
	n := h.count.Load()
	if n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(n)))
	rank = min(max(rank, 1), n)
	var seen uint64
	for i := range h.buckets {
		seen += h.buckets[i].Load()
		if seen >= rank {
			lo, hi := bucketBounds(i)
			return time.Duration(min(lo+(hi-lo)/2, h.max.Load()))
		}
	}
	return h.Max() // counts raced ahead of the buckets
}
