package eval

import (
	"github.com/earshot-voice/earshot/voiceprint"
)

// sink is what eval attaches to a pipeline: it scores the voice decisions
// against the ground truth (when it has one), accumulates the speaker
// model as a register session does (ObservePCM per hop, AddVectors per
// batch of voiced vectors), optionally keeps the vectors for verification
// trials, and stops accumulating at a voice cap.
type sink struct {
	enr *voiceprint.Enroller
	dim int

	// capFrames, when positive, is the voice (vectors) the enroller takes;
	// capped is set once it has them, and the sink then ignores the rest.
	capFrames int
	frames    int
	capped    bool

	truth []bool // per hop; nil: no scoring
	hop   int
	conf  Confusion

	keep    bool
	vectors []float32 // the accepted vectors, when keep

	err error // the first error of the enroller
}

func newSink(m voiceprint.Model, capFrames int) *sink {
	return &sink{enr: m.NewEnroller(), dim: m.Dim, capFrames: capFrames}
}

// Hop implements pipeline.Sink.
func (s *sink) Hop(pcm []int16, voiced bool) {
	if s.truth != nil {
		s.conf.Add(s.hop < len(s.truth) && s.truth[s.hop], voiced)
		s.hop++
	}
	if !s.capped {
		s.enr.ObservePCM(pcm, voiced)
	}
}

// Features implements pipeline.Sink.
func (s *sink) Features(vecs []float32, n int) {
	if s.capped {
		return
	}
	if s.capFrames > 0 && s.frames+n >= s.capFrames {
		n = s.capFrames - s.frames
		s.capped = true
	}
	v := vecs[:n*s.dim]
	if err := s.enr.AddVectors(v); err != nil && s.err == nil {
		s.err = err
	}
	if s.keep {
		s.vectors = append(s.vectors, v...)
	}
	s.frames += n
}

// voiceSeconds is the voice the enroller has taken.
func (s *sink) voiceSeconds() float64 { return float64(s.frames) / 100 }
