package features

import (
	"math"
	"slices"
)

// varFloor keeps variance normalisation finite when a coefficient is
// constant over the window (digital silence marked voiced, a pure tone).
const varFloor = 1e-6

// slidingNorm is the streaming cepstral mean (and optionally variance)
// normaliser. Vectors of dim values enter in order; the first nd values of
// each are normalised with the mean (and standard deviation) of those
// values over a window of win vectors: the vector itself, back vectors
// before it and ahead vectors after it (back + 1 + ahead = win), cut at the
// start of the stream and, on drain, at its end. With ahead = 0 the window
// trails the vector and vectors leave as they enter; otherwise each leaves
// once the ahead vectors after it have entered.
//
// The window statistics are the sums over the last win entered vectors,
// kept in float64 and recomputed from the ring every win vectors so that
// rounding cannot drift over a long call. A vector waiting to leave is
// still in the ring (ahead < win), so only its values past nd are queued:
// with variance normalisation, none.
type slidingNorm struct {
	dim, nd       int
	win, ahead    int
	variance      bool
	ring          []float32 // win × nd: the values of the last win vectors, vector f in slot f % win
	n             int       // vectors entered since reset
	sum, sq       []float64 // over the last min(n, win) vectors
	queue         []float32 // (ahead+1) × (dim−nd): the rest of the entered vectors not yet out, vector f in slot f % (ahead+1)
	out           int       // vectors out since reset
	tmpSum, tmpSq []float64 // scratch for drain
}

// newSlidingNorm returns a normaliser of vectors of dim values whose first
// nd are normalised over windows of win vectors, ahead of them after the
// vector (0 ≤ ahead < win).
func newSlidingNorm(dim, nd, win, ahead int, variance bool) slidingNorm {
	s := slidingNorm{
		dim: dim, nd: nd, win: win, ahead: ahead, variance: variance,
		ring:   make([]float32, win*nd),
		sum:    make([]float64, nd),
		tmpSum: make([]float64, nd),
		queue:  make([]float32, (ahead+1)*(dim-nd)),
	}
	if variance {
		s.sq = make([]float64, nd)
		s.tmpSq = make([]float64, nd)
	}
	return s
}

func (s *slidingNorm) reset() {
	s.n, s.out = 0, 0
	clear(s.sum)
	clear(s.sq)
}

// add enters v (dim values) and, when the vector ahead places back is
// complete, writes it normalised to out (dim values) and returns true.
func (s *slidingNorm) add(out, v []float32) bool {
	d := s.nd
	slot := s.n % s.win
	old := s.ring[slot*d : slot*d+d]
	sum := s.sum[:d]
	if s.n >= s.win {
		for i, x := range old {
			sum[i] -= float64(x)
		}
		if s.variance {
			sq := s.sq[:d]
			for i, x := range old {
				sq[i] -= float64(x) * float64(x)
			}
		}
	}
	copy(old, v[:d])
	for i, x := range old {
		sum[i] += float64(x)
	}
	if s.variance {
		sq := s.sq[:d]
		for i, x := range old {
			sq[i] += float64(x) * float64(x)
		}
	}
	s.n++
	if s.n%s.win == 0 {
		s.recompute()
	}
	if rest := s.dim - d; rest > 0 {
		q := (s.n - 1) % (s.ahead + 1)
		copy(s.queue[q*rest:q*rest+rest], v[d:s.dim])
	}
	if s.n-s.out <= s.ahead {
		return false
	}
	s.pop(out, s.sum, s.sq, min(s.n, s.win))
	return true
}

// drain writes the vectors still queued, normalised with windows cut at
// the last vector entered, to dst (appending) and returns it with their
// count. The window statistics are left as they were.
func (s *slidingNorm) drain(dst []float32) ([]float32, int) {
	k := 0
	copy(s.tmpSum, s.sum)
	copy(s.tmpSq, s.sq)
	inWin := min(s.n, s.win)
	first := s.n - inWin // oldest vector in the sums
	for s.out < s.n {
		// The window of vector out starts back vectors before it.
		for ; first < s.out-(s.win-1-s.ahead); first++ {
			slot := first % s.win
			for i, x := range s.ring[slot*s.nd : slot*s.nd+s.nd] {
				s.tmpSum[i] -= float64(x)
				if s.variance {
					s.tmpSq[i] -= float64(x) * float64(x)
				}
			}
			inWin--
		}
		n := len(dst)
		dst = slices.Grow(dst, s.dim)[:n+s.dim]
		s.pop(dst[n:], s.tmpSum, s.tmpSq, inWin)
		k++
	}
	return dst, k
}

// pop writes the oldest queued vector to out, its first nd values
// normalised with the sums over count vectors, and removes it.
func (s *slidingNorm) pop(out []float32, sum, sq []float64, count int) {
	out = out[:s.dim]
	slot := s.out % s.win
	copy(out, s.ring[slot*s.nd:slot*s.nd+s.nd])
	if rest := s.dim - s.nd; rest > 0 {
		q := s.out % (s.ahead + 1)
		copy(out[s.nd:], s.queue[q*rest:q*rest+rest])
	}
	s.out++
	inv := 1 / float64(count)
	sum = sum[:s.nd]
	o := out[:len(sum)]
	if !s.variance {
		for i, x := range o {
			o[i] = float32(float64(x) - sum[i]*inv)
		}
		return
	}
	sq = sq[:len(sum)]
	for i, x := range o {
		mean := sum[i] * inv
		vr := sq[i]*inv - mean*mean
		o[i] = float32((float64(x) - mean) / math.Sqrt(max(vr, varFloor)))
	}
}

// recompute sets the sums from the ring; called when it is full.
func (s *slidingNorm) recompute() {
	clear(s.sum)
	clear(s.sq)
	for f := 0; f < s.win; f++ {
		row := s.ring[f*s.nd : f*s.nd+s.nd]
		for i, x := range row {
			s.sum[i] += float64(x)
		}
		if s.variance {
			for i, x := range row {
				s.sq[i] += float64(x) * float64(x)
			}
		}
	}
}

// Normalize applies utterance-level cepstral mean normalisation in place to
// vecs, a whole utterance of vectors of dim coefficients each: every
// coefficient has its mean over the utterance subtracted and, when
// variance is true, is divided by its standard deviation over the
// utterance. Use it on vectors from an extractor made with Norm: NormOff
// when the model wants utterance statistics rather than a sliding window.
// It returns ErrDim when dim < 1 or len(vecs) is not a multiple of dim. It
// allocates two float64 slices of dim elements.
func Normalize(vecs []float32, dim int, variance bool) error {
	if dim < 1 || len(vecs)%dim != 0 {
		return ErrDim
	}
	n := len(vecs) / dim
	if n == 0 {
		return nil
	}
	sum := make([]float64, dim)
	sq := make([]float64, dim)
	for f := 0; f < n; f++ {
		for i, x := range vecs[f*dim : f*dim+dim] {
			sum[i] += float64(x)
		}
	}
	inv := 1 / float64(n)
	for i := range sum {
		sum[i] *= inv // now the mean
	}
	scale := sq // reused: 1/std, or 1
	if variance {
		for f := 0; f < n; f++ {
			for i, x := range vecs[f*dim : f*dim+dim] {
				d := float64(x) - sum[i]
				sq[i] += d * d
			}
		}
		for i := range sq {
			scale[i] = 1 / math.Sqrt(max(sq[i]*inv, varFloor))
		}
	} else {
		for i := range scale {
			scale[i] = 1
		}
	}
	for f := 0; f < n; f++ {
		row := vecs[f*dim : f*dim+dim]
		for i, x := range row {
			row[i] = float32((float64(x) - sum[i]) * scale[i])
		}
	}
	return nil
}
