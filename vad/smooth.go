package vad

// ringSize bounds the delay: labels of the last ringSize frames are kept.
const ringSize = 128

// smoother turns raw per-frame decisions into final ones. It groups voiced
// frames separated by short gaps into segments, drops segments with too few
// voiced frames, fills the gaps inside a segment, and extends it over the
// weak frames (a little power above the noise: soft onsets and decays)
// right before its first voiced frame and right after its last, up to a
// pre-roll and a tail length. It emits each frame's label a fixed number
// of frames later, so that the pre-roll and the gap filling can still
// change it. In digital silence nothing is weak and the edges stay where
// the voice starts and stops.
type smoother struct {
	c          *config
	lab        [ringSize]bool
	weak       [ringSize]bool
	tailOpen   bool // every frame since the last voiced one was weak
	t          int  // index of the next frame
	lastVoiced int
	segStart   int
	segCount   int
	confirmed  bool
}

func (s *smoother) reset() {
	s.lab = [ringSize]bool{}
	s.t = 0
	s.lastVoiced = -1 << 30
	s.segStart = 0
	s.segCount = 0
	s.confirmed = false
	s.tailOpen = false
	s.weak = [ringSize]bool{}
}

// mark labels frames from..to (inclusive) as speech, as far as they have not
// been emitted yet.
func (s *smoother) mark(from, to int) {
	if lo := s.t - s.c.delay; from < lo {
		from = lo
	}
	if from < 0 {
		from = 0
	}
	for i := from; i <= to; i++ {
		s.lab[i%ringSize] = true
	}
}

// push takes the raw decision for the next frame. It returns the final
// label of the frame delay frames back, and ok = false while fewer than
// delay+1 frames have been pushed.
func (s *smoother) push(raw, weak bool) (voiced, ok bool) {
	c := s.c
	t := s.t
	s.lab[t%ringSize] = false
	s.weak[t%ringSize] = weak
	if raw {
		s.tailOpen = true
		if t-s.lastVoiced > c.gap {
			s.segStart, s.segCount, s.confirmed = t, 0, false
		}
		s.segCount++
		switch {
		case s.confirmed:
			s.mark(s.lastVoiced+1, t)
		case s.segCount >= c.minVoiced:
			s.confirmed = true
			from := s.segStart
			for i := from - 1; i >= s.segStart-c.preroll && i >= t-c.delay && i >= 0 && s.weak[i%ringSize]; i-- {
				from = i
			}
			s.mark(from, t)
		}
		s.lastVoiced = t
	} else {
		if !weak {
			s.tailOpen = false
		}
		if s.confirmed && s.tailOpen && t-s.lastVoiced <= c.tail {
			s.lab[t%ringSize] = true
		}
	}
	s.t++
	if t < c.delay {
		return false, false
	}
	return s.lab[(t-c.delay)%ringSize], true
}

// label returns the current label of frame i, one of the last ringSize
// frames pushed.
func (s *smoother) label(i int) bool {
	return s.lab[i%ringSize]
}
