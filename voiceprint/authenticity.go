package voiceprint

import "math"

// Authenticity is the service's confidence that a collection of audio is
// one live speaker of usable quality, with the measurements behind it.
//
// What it measures:
//   - Consistency: the collection is cut into time segments of voice (1 s
//     at first; when twelve are complete, neighbours merge and later
//     segments are twice as long, so a 10 s collection has a boundary
//     every second); at every segment boundary with at least 2.5 s of
//     voice on each side, the speaker model (MAP mean offsets,
//     nuisance-projected) of the audio before it is compared (cosine)
//     with that of the audio after it, and the lowest cosine is kept. A
//     collection in which the speaker changes scores low, and the fine
//     boundaries find the change even when the second speaker holds only
//     the last 3 s.
//   - PitchShift: at the same boundaries, the median voice pitch (F0 by
//     normalised autocorrelation of every voiced 10 ms hop, periodic hops
//     only) before and after, when each side has at least 0.5 s of
//     periodic voice; the largest difference in semitones is kept. Unlike
//     the spectral model it does not move with the channel (noise, codec),
//     and two voices of different pitch differ by several semitones.
//   - PitchShiftZ: the same differences divided by the pitch spread of
//     the two sides (their mean interquartile range as a standard
//     deviation, at least 0.5 semitones); the largest is kept. A human
//     voice's pitch wanders with intonation, from one sentence to the
//     next by as much as 4 to 6 semitones in the recorded voices of the
//     dev corpus, and within a sentence by as much again; a synthetic one
//     hardly moves. Measured in its own spread, a change of speaker stands
//     out in both, and a lively genuine speaker is not taken for two.
//   - SNRdB: mean power of the voiced hops over the noise floor of the
//     unvoiced hops.
//   - Clipping: the fraction of voiced samples at full scale.
//   - Loop: the fraction of voiced frames (of the latest 20 s of voice)
//     whose 32-bit fingerprint (signs of deltas and frame-to-frame
//     changes) recurs, within 9 bits and ±10 ms, at one constant lag:
//     audio replayed in a loop to fill the duration, whatever its
//     alignment to the 10 ms hops, and still when fresh noise 20 dB down
//     is added to each repetition.
//
// Score is the product of four factors in [0, 1] with parameters fitted
// on training data and stored in the model (AuthParams): a speaker factor,
// one logistic function of Consistency and PitchShiftZ together (whose
// demand on Consistency grows with VoiceSeconds), and one logistic
// function each of SNRdB, Clipping and Loop.
//
// What it cannot do: it is not a deepfake or synthetic-speech detector (a
// consistent synthetic voice passes), it does not detect a single replay
// of a recording (only repetition within the collection), two voices
// speaking at the same time (overlap) are not separated and often pass,
// a second speaker talking for less than about a quarter of the voice,
// or alternating with the first, is diluted, and two voices of similar
// pitch and timbre (in these tests, variants of one synthesiser) are
// often taken for one.
// With less than 5 s of voice (2.5 s each side) there is nothing to
// compare: Consistency is 1, PitchShift and PitchShiftZ 0.
// The loop check needs 2.3 s of voice (a 0.3 s lag and 2 s compared).
type Authenticity struct {
	// Score is the overall confidence, 0 to 1.
	Score float64
	// Consistency is the lowest before-versus-after cosine over the
	// segment boundaries, −1 to 1; 1 when nothing could be compared.
	Consistency float64
	// PitchShift is the largest difference, in semitones, between the
	// median voice pitch before and after a segment boundary (0 when
	// nothing could be compared).
	PitchShift float64
	// PitchShiftZ is the largest pitch difference across a boundary in
	// units of the pitch spread of its two sides (0 when nothing could be
	// compared).
	PitchShiftZ float64
	// Segments is the number of time segments the collection was cut
	// into (the partial last one included).
	Segments int
	// SNRdB is the estimated signal-to-noise ratio, −10 to 60 dB.
	SNRdB float64
	// Clipping is the fraction of voiced samples at full scale.
	Clipping float64
	// Loop is the fraction of voiced frames repeated at LoopLagSeconds
	// (of voice) earlier: near 0 for live speech, near 1 for a loop.
	Loop           float64
	LoopLagSeconds float64
	// VoiceSeconds is the net voice of the collection.
	VoiceSeconds float64
}

func logistic(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func (c *collector) authenticity() Authenticity {
	p := c.m.def.Auth
	a := Authenticity{VoiceSeconds: float64(c.frames) / 100}
	a.Consistency, a.PitchShift, a.PitchShiftZ, a.Segments = c.consistency()
	a.SNRdB = c.snrDB()
	a.Clipping = c.clipping()
	var lag int
	a.Loop, lag = c.loop()
	a.LoopLagSeconds = float64(lag) / 100
	l := math.Log(math.Max(a.VoiceSeconds, 1) / 10)
	fc := logistic(p.ConsistencySlope*(a.Consistency-p.ConsistencyMid) - p.PitchSlope*a.PitchShiftZ +
		p.ConsistencyVoiceSlope*a.Consistency*l + p.VoiceSlope*l)
	fs := logistic(p.SNRSlope * (a.SNRdB - p.SNRMidDB))
	fk := 1 - logistic(p.ClipSlope*(a.Clipping-p.ClipMid))
	fl := 1 - logistic(p.LoopSlope*(a.Loop-p.LoopMid))
	a.Score = fc * fs * fk * fl
	if c.frames == 0 {
		a.Score = 0
	}
	return a
}
