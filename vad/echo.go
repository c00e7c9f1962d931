package vad

// echoLags is the number of frame delays (0 to 310 ms) at which the
// reference channel may reappear as echo.
const echoLags = 32

// echoEstimator predicts, band by band, how much of a channel's power is an
// echo of a reference channel (in a stereo call: the agent leg leaking into
// the caller leg). It follows the excess power over the noise floor of both
// channels, r(t) for the reference and c(t) for the channel, summed over
// bands, and for every delay d in 0..echoLags−1 keeps exponentially
// forgotten sums of r(t−d)·c(t) and r(t−d)². The delay with the highest
// normalised correlation is taken as the echo path delay and the
// least-squares ratio at that delay as its power coupling g, so the echo in
// band b is predicted as g·r_b(t−d) (the maximum over d−1..d+1, for delays
// between frames). The cost is a few multiply-adds per lag and frame.
//
// Frames where c(t) exceeds echoMaxGain (−15 dB) times the largest recent
// r are left out of the sums: no plausible echo is that loud, so they hold
// the channel's own voice, which would otherwise bias the delay towards
// the turn-taking rhythm of the call (the caller answering 200–400 ms after
// the agent stops). The sums forget with a time constant of about 2,000
// frames used, so the estimate settles within the first agent utterance
// and then stays put through double talk.
type echoEstimator struct {
	c    *config
	ring [echoLags][numBands]float64 // excess reference power, by frame mod echoLags
	rsum [echoLags]float64           // the same summed over bands
	sxy  [echoLags]float64
	sxx  [echoLags]float64
	t    int
	best int     // chosen delay in frames, −1 while unknown
	gain float64 // power coupling at that delay
}

func (e *echoEstimator) reset() {
	*e = echoEstimator{c: e.c, best: -1}
}

// update takes the excess band powers of the reference (r) and of the
// channel (x) for the current frame and writes the predicted echo power per
// band into out.
func (e *echoEstimator) update(r, x *[numBands]float64, out *[numBands]float64) {
	c := e.c
	const mask = echoLags - 1
	now := e.t & mask
	e.ring[now] = *r
	cs, rs := 0.0, 0.0
	for b := range x {
		cs += x[b]
		rs += r[b]
	}
	e.rsum[now] = rs
	lags := min(echoLags, e.t+1)
	var rsum [echoLags]float64
	rmax := 0.0
	for d := 0; d < lags; d++ {
		v := e.rsum[(e.t-d)&mask]
		rsum[d] = v
		if v > rmax { // not max(): it orders NaNs and signed zeros, slowly
			rmax = v
		}
	}
	// A frame whose excess power is larger than any plausible echo of the
	// recent reference is the channel's own speech: leave it out.
	if cs <= c.echoMaxGain*rmax {
		lam := c.echoForget
		best, bxy, bxx := -1, 0.0, 1.0
		for d := 0; d < lags; d++ {
			xy := lam*e.sxy[d] + rsum[d]*cs
			xx := lam*e.sxx[d] + rsum[d]*rsum[d]
			e.sxy[d], e.sxx[d] = xy, xx
			// Highest xy/√xx, compared without the root: both sides
			// positive.
			if xy > 0 && xy*xy*bxx > bxy*bxy*xx {
				best, bxy, bxx = d, xy, xx
			}
		}
		e.best = best
		if best >= 0 {
			e.gain = bxy / bxx
		}
	}
	e.t++
	*out = [numBands]float64{}
	if e.best < 0 {
		return
	}
	g := e.gain
	for d := max(e.best-c.echoSpread, 0); d <= e.best+c.echoSpread && d < lags; d++ {
		rr := &e.ring[(e.t-1-d)&mask]
		for b, v := range rr {
			if p := g * v; p > out[b] {
				out[b] = p
			}
		}
	}
}
