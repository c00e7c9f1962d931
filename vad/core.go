package vad

import "math"

// config holds every tuning constant of the detector. New uses
// defaultConfig, whose values were chosen on corpora of the train splits
// of the labelled telephony corpus (never on the dev split, which only
// confirmed them).
type config struct {
	// noise tracking (per band, linear power)
	smooth     float64 // recursive smoothing of the band power used for tracking
	fall       float64 // N ← fall·N + (1−fall)·S when S < N
	track      float64 // N ← track·N + (1−track)·S when S < trackRatio·N
	trackRatio float64
	rise       float64 // N ← rise·N otherwise (slow drift up)
	minWin     int     // frames per half of the running-minimum window
	minRatio   float64 // N ← Smin/minRatio when the window minimum Smin exceeds minRatio·N
	floorDB    float64 // absolute floor of the noise estimate, dB full scale

	// echo suppression
	echoForget  float64 // forgetting factor of the correlation sums, per frame used
	echoSpread  int     // predict the echo as the maximum over delay ± spread
	echoOver    float64 // the predicted echo power is counted this many times as noise
	echoMaxGain float64 // frames with more excess power than this times the reference's are not echo

	// frame decision
	thrOn     float64 // mean band SNR (dB) that starts a voiced run
	thrOff    float64 // mean band SNR (dB) that continues one
	thrWeak   float64 // mean band SNR (dB) of a frame that may extend a segment's edges
	snrCap    float64 // band SNRs are capped at this many dB before averaging
	gateDB    float64 // frames whose excess power is this far below the peak are not voiced
	peakDecay float64 // dB per frame by which the peak excess power decays

	// smoothing, in frames
	delay     int // look-ahead: decisions lag the input by this many frames
	preroll   int // a segment extends at most this far before its first voiced frame
	gap       int // voiced frames at most this far apart join one segment
	tail      int // a segment extends at most this far after its last voiced frame
	minVoiced int // voiced frames a segment needs to count
}

func defaultConfig() config {
	return config{
		smooth:      0.5,
		fall:        0.7,
		track:       0.95,
		trackRatio:  2,
		rise:        1.002,
		minWin:      60,
		minRatio:    2,
		floorDB:     -70,
		echoForget:  0.9995,
		echoSpread:  1,
		echoOver:    2,
		echoMaxGain: 0.03,
		thrOn:       6,
		thrOff:      2.5,
		thrWeak:     1,
		snrCap:      60,
		gateDB:      40,
		peakDecay:   0.03,
		delay:       40,
		preroll:     8,
		gap:         40,
		tail:        15,
		minVoiced:   4,
	}
}

// tracker follows the noise power of each band: a recursive average that
// falls fast and rises slowly, with a running minimum over minWin..2·minWin
// frames (the minimum-statistics idea) that pulls it up when the background
// gets louder.
type tracker struct {
	c      *config
	floor  [numBands]float64
	s      [numBands]float64 // smoothed power
	n      [numBands]float64 // noise estimate
	smin   [numBands]float64
	stmp   [numBands]float64
	count  int
	frames int
}

func (t *tracker) init(c *config) {
	t.c = c
	// Power of a full-scale-relative white noise floor in one bin of the
	// Hann-windowed 128-point FFT: σ²·Σw², Σw² = 3/8·128.
	sigma := 32768 * math.Pow(10, c.floorDB/20)
	perBin := sigma * sigma * 48
	for b, e := range bandEdges {
		t.floor[b] = perBin * float64(e[1]-e[0]+1)
	}
}

func (t *tracker) reset() {
	t.s = [numBands]float64{}
	t.n = [numBands]float64{}
	t.smin = [numBands]float64{}
	t.stmp = [numBands]float64{}
	t.count = 0
	t.frames = 0
}

// track feeds the band powers p of one frame to the noise estimates.
func (t *tracker) track(p *[numBands]float64) {
	c := t.c
	f := t.frames
	t.frames++
	if f < 2 {
		// The noise starts as the power of the second frame. The first
		// frame only stands in until then: its window is partly empty
		// history, so its power is too low.
		for b, pb := range p {
			t.s[b], t.smin[b], t.stmp[b] = pb, pb, pb
			t.n[b] = max(pb, t.floor[b])
		}
		return
	}
	t.count++
	rotate := t.count >= c.minWin
	if rotate {
		t.count = 0
	}
	for b, pb := range p {
		s := c.smooth*t.s[b] + (1-c.smooth)*pb
		t.s[b] = s
		n := t.n[b]
		switch {
		case s < n:
			n = c.fall*n + (1-c.fall)*s
		case s < c.trackRatio*n:
			n = c.track*n + (1-c.track)*s
		default:
			n *= c.rise
		}
		// Plain comparisons rather than min and max, which order NaNs
		// and signed zeros at a cost: the powers are neither.
		if s < t.smin[b] {
			t.smin[b] = s
		}
		if s < t.stmp[b] {
			t.stmp[b] = s
		}
		if rotate {
			if t.smin[b] > c.minRatio*n {
				n = t.smin[b] / c.minRatio
			}
			t.smin[b] = t.stmp[b]
			t.stmp[b] = s
		}
		if n < t.floor[b] {
			n = t.floor[b]
		}
		t.n[b] = n
	}
}

// excess writes each band's power above its noise estimate into dst.
func (t *tracker) excess(p, dst *[numBands]float64) {
	for b, v := range p {
		if v > t.n[b] {
			dst[b] = v - t.n[b]
		} else {
			dst[b] = 0
		}
	}
}

// classifier makes the raw per-frame decision: a voiced frame has a mean
// sub-band SNR above a threshold (with hysteresis) and an excess power over
// the noise within gateDB of the loudest recent frame, so that faint
// reverberation or breath far below the talker's level does not count.
type classifier struct {
	c     *config
	tr    tracker
	cap   float64 // snrCap as a power ratio
	peak  float64
	decay float64
	raw   bool
	gate  float64
}

func (k *classifier) init(c *config) {
	k.c = c
	k.tr.init(c)
	k.decay = math.Pow(10, -c.peakDecay/10)
	k.gate = math.Pow(10, -c.gateDB/10)
	k.cap = math.Pow(10, c.snrCap/10)
}

func (k *classifier) reset() {
	k.tr.reset()
	k.peak = 0
	k.raw = false
}

// frame classifies one frame from its band powers p; echo, when not nil, is
// the predicted echo power per band, counted as noise. A voiced frame
// passes the (hysteresis) threshold; a weak one has a little power above
// the noise (mean band SNR above thrWeak), enough to extend a segment's
// edges but not to start one. Both must pass the level gate.
func (k *classifier) frame(p, echo *[numBands]float64) (voiced, weak bool) {
	c := k.c
	k.tr.track(p)
	// The mean of the band SNRs in dB is 10·log10 of the product of the
	// power ratios over numBands: one logarithm per frame.
	prod, ex := 1.0, 0.0
	for b, pb := range p {
		n := k.tr.n[b]
		if d := pb - n; d > 0 {
			ex += d
		}
		if echo != nil {
			n += c.echoOver * echo[b]
		}
		switch r := pb / n; {
		case r > k.cap:
			prod *= k.cap
		case r > 1:
			prod *= r
		}
	}
	s := 10 / float64(numBands) * math.Log10(prod)
	k.peak *= k.decay
	if ex > k.peak {
		k.peak = ex
	}
	if k.raw {
		k.raw = s > c.thrOff
	} else {
		k.raw = s > c.thrOn
	}
	loud := ex >= k.gate*k.peak
	return k.raw && loud, s > c.thrWeak && loud
}
