package voiceprint

import (
	"math"
	"math/bits"
)

const (
	// blockSlots bounds the completed time segments kept for the
	// consistency check; when they are all full, neighbours merge pairwise
	// and later segments are twice as long, so a collection of any length
	// ends with 6 to 12 completed segments and a partial one. The
	// segments' statistics are the collection's statistics: their sum.
	blockSlots = 12
	// firstBlockFrames is the initial segment length: 1 s of voice, the
	// resolution at which the consistency check places a change of
	// speaker in collections of up to 12 s.
	firstBlockFrames = 100
	// minSideFrames is the voice each side of a compared segment boundary
	// must hold: 2.5 s. Less gives too noisy a speaker model.
	minSideFrames = 250
	// ringFrames is how many of the latest voiced frames the loop detector
	// remembers: 20.48 s of voice.
	ringFrames = 2048
	// histBins is the number of 0.5 dB bins of the hop-energy histograms
	// (0 to 96 dB re one int16 unit squared).
	histBins = 192
	// clipLevel: a sample at or beyond ±clipLevel counts as clipped. The
	// largest µ-law magnitude is 32124.
	clipLevel = 32000
)

// collector accumulates, frame by frame, everything an enrolment or a
// verification needs: the Baum-Welch statistics of the voiced feature
// vectors against the UBM, per-segment statistics of the static
// coefficients for the consistency check, a fingerprint ring for loop
// detection, and hop-energy histograms and a clipping count from the PCM.
// Memory: see Enroller.
type collector struct {
	m  *compiled
	f  frame
	nc int // static coefficients per vector

	cur      stats                   // the segment being filled, in float32
	done     [blockSlots]packedStats // completed segments
	nDone    int
	blockLen int // frames per segment
	frames   int // vectors accumulated

	ring  [ringFrames]uint32
	ringN int
	prev  [6]float32

	// Pitch: the latest hops decimated to 4 kHz, oldest first, how many
	// hops they hold, the voiced hops seen, the pitch bin (+1; 0 for none)
	// of the latest voiced hops by their index, autocorrelation scratch,
	// the previous hop's second-half correlations (valid when pHalfOK),
	// and pitch histograms of the segment being filled and of the
	// completed ones.
	pbuf    [pitchBuf]float32
	pfill   int
	pvoice  int
	pq      [pitchQueue]uint8
	pr      [pitchMaxLag + 2]float32
	pHalf   [pitchMaxLag + 1]float32
	pHalfOK bool
	curP    [pitchBins]uint32
	doneP   [blockSlots][pitchBins]uint32

	hist          [2][histBins]uint32 // [0] unvoiced hops, [1] voiced hops
	voicedPower   float64             // Σ mean square of voiced hops
	voicedSamples int64
	clipped       int64
}

// packedStats holds a completed segment's statistics in half the space:
// the counts N in float32 and the whitened deviations of the component
// means from the UBM's, z = (F/N − μ)/σ, in binary16 (|z| is a few units,
// so the rounding error is about 10⁻³ of σ).
type packedStats struct {
	n      []float32
	z      []uint16
	frames int
}

func (c *collector) init(m *compiled) {
	c.m = m
	g := m.g
	c.f = g.newFrame()
	c.cur = newStats(g)
	for i := range c.done {
		c.done[i] = packedStats{n: make([]float32, g.k), z: make([]uint16, g.k*g.d)}
	}
	c.nc = g.d / 3
	if c.nc < 1 {
		c.nc = g.d
	}
	c.reset()
}

func (c *collector) reset() {
	c.cur.reset()
	c.nDone, c.blockLen, c.frames = 0, firstBlockFrames, 0
	c.ringN = 0
	c.prev = [6]float32{}
	c.pfill, c.pvoice = 0, 0
	c.pHalfOK = false
	c.pq = [pitchQueue]uint8{}
	c.curP = [pitchBins]uint32{}
	c.doneP = [blockSlots][pitchBins]uint32{}
	c.hist = [2][histBins]uint32{}
	c.voicedPower, c.voicedSamples, c.clipped = 0, 0, 0
}

// add accumulates one feature vector; len(x) must be the model's Dim. A
// vector with a NaN or infinite value is refused (false) and not counted.
func (c *collector) add(x []float32) bool {
	g := c.m.g
	g.eval(x, &c.f)
	if l := c.f.logLik; l != l || l > math.MaxFloat32 || l < -math.MaxFloat32 {
		return false
	}
	if c.cur.frames == c.blockLen {
		c.nextBlock()
	}
	c.cur.add(g, x, &c.f)
	// The vector of the k-th voiced hop carries that hop's pitch into the
	// segment: vectors come out of the extractor's normalisation window
	// later than their hops.
	if c.frames < c.pvoice && c.pvoice-c.frames <= pitchQueue {
		if b := c.pq[c.frames%pitchQueue]; b > 0 {
			c.curP[b-1]++
		}
	}
	c.frames++
	c.ring[c.ringN%ringFrames] = c.fingerprint(x)
	c.ringN++
	return true
}

// nextBlock packs the full current segment, merging completed segments
// pairwise first when all slots are taken.
func (c *collector) nextBlock() {
	if c.nDone == blockSlots {
		for i := 0; i < blockSlots/2; i++ {
			c.merge(&c.done[i], &c.done[2*i], &c.done[2*i+1])
			for j := range c.doneP[i] {
				c.doneP[i][j] = c.doneP[2*i][j] + c.doneP[2*i+1][j]
			}
		}
		c.nDone = blockSlots / 2
		c.blockLen *= 2
	}
	c.pack(&c.done[c.nDone], &c.cur)
	c.doneP[c.nDone] = c.curP
	c.curP = [pitchBins]uint32{}
	c.nDone++
	c.cur.reset()
}

func (c *collector) pack(p *packedStats, s *stats) {
	g := c.m.g
	d := g.d
	copy(p.n, s.n)
	p.frames = s.frames
	for k := 0; k < g.k; k++ {
		n := s.n[k]
		z := p.z[k*d : (k+1)*d]
		if n < 1e-6 {
			clear(z)
			continue
		}
		inv := 1 / n
		for i := range z {
			j := k*d + i
			z[i] = toHalf((s.f[j]*inv - g.mean[j]) * g.isd[j])
		}
	}
}

// merge writes a+b into dst, which may be a.
func (c *collector) merge(dst, a, b *packedStats) {
	d := c.m.g.d
	for k := range a.n {
		na, nb := a.n[k], b.n[k]
		n := na + nb
		z, za, zb := dst.z[k*d:(k+1)*d], a.z[k*d:(k+1)*d], b.z[k*d:(k+1)*d]
		if n < 1e-6 {
			clear(z)
		} else {
			wa, wb := na/n, nb/n
			for i := range z {
				z[i] = toHalf(wa*fromHalf(za[i]) + wb*fromHalf(zb[i]))
			}
		}
		dst.n[k] = n
	}
	dst.frames = a.frames + b.frames
}

// addPacked adds the statistics of p to s.
func (c *collector) addPacked(s *stats, p *packedStats) {
	g := c.m.g
	d := g.d
	for k := 0; k < g.k; k++ {
		n := p.n[k]
		s.n[k] += n
		for i := 0; i < d; i++ {
			j := k*d + i
			s.f[j] += n * (g.mean[j] + fromHalf(p.z[j])*g.sd[j])
		}
	}
	s.frames += p.frames
}

// total writes the statistics of the whole collection into dst.
func (c *collector) total(dst *stats) {
	dst.reset()
	for i := 0; i < c.nDone; i++ {
		c.addPacked(dst, &c.done[i])
	}
	dst.addStats(&c.cur)
}

// fingerprint packs 32 sign bits of a vector: the deltas and delta-deltas
// of the first 13 static coefficients and the frame-to-frame change of
// c1..c6. Signs of differences do not move with the sliding mean
// normalisation, so a replayed stretch of audio gives the same bits.
func (c *collector) fingerprint(x []float32) uint32 {
	nc := c.nc
	var fp uint32
	bit := 0
	n := min(nc, 13)
	if len(x) >= 3*nc {
		for i := 0; i < n; i++ {
			if x[nc+i] > 0 {
				fp |= 1 << bit
			}
			bit++
		}
		for i := 0; i < n; i++ {
			if x[2*nc+i] > 0 {
				fp |= 1 << bit
			}
			bit++
		}
	}
	for i := 0; i < 6 && i+1 < nc; i++ {
		v := x[i+1]
		if v > c.prev[i] {
			fp |= 1 << bit
		}
		c.prev[i] = v
		bit++
	}
	return fp
}

// observePCM accounts one hop of PCM.
func (c *collector) observePCM(hop []int16, voiced bool) {
	if len(hop) == 0 {
		return
	}
	var e int64
	var clip int64
	for _, s := range hop {
		v := int64(s)
		e += v * v
		if v >= clipLevel || v <= -clipLevel {
			clip++
		}
	}
	if len(hop) == 2*pitchHop {
		c.pitch(hop, voiced)
	}
	ms := float64(e) / float64(len(hop))
	bin := int(20 * math.Log10(ms+1)) // 0.5 dB bins
	bin = max(0, min(bin, histBins-1))
	if voiced {
		c.hist[1][bin]++
		c.voicedPower += ms
		c.voicedSamples += int64(len(hop))
		c.clipped += clip
	} else {
		c.hist[0][bin]++
	}
}

const (
	pitchHop     = 40           // samples per 10 ms hop at 4 kHz
	pitchWin     = 80           // samples correlated: 20 ms
	pitchMinLag  = 10           // 400 Hz
	pitchMaxLag  = 50           // 80 Hz
	pitchBuf     = 4 * pitchHop // the latest four hops
	pitchMinCorr = 0.6          // normalised autocorrelation of a periodic frame
	pitchBins    = 160          // quarter-semitone bins from 50 Hz to 400 Hz
	pitchBinsPer = 4            // bins per semitone
	pitchBase    = 50.0         // Hz at bin 0
	pitchPeak    = 0.85         // a shorter lag within this fraction of the best wins
	pitchStart   = pitchBuf - pitchWin - pitchMaxLag
	pitchQueue   = 512 // voiced hops whose pitch waits for their vector: 5.12 s
)

// pitch keeps the latest hops of 8 kHz PCM (80 samples) decimated to
// 4 kHz and, on every voiced hop, estimates the fundamental
// frequency of the latest 32.5 ms by normalised autocorrelation over lags
// of 2.5 to 12.5 ms (400 to 80 Hz). A frame whose best correlation is
// below pitchMinCorr is not periodic enough and is not counted; otherwise
// the shortest lag whose correlation peak is within pitchPeak of the best
// is taken (against period doubling), refined by a parabola, and counted
// in the histogram of log frequency of the segment that the hop's vector
// goes to.
//
// The 20 ms correlated window is two hops: its first half is the previous
// hop's second half, so on consecutive voiced hops each lag's sum over the
// first half is the one computed a hop earlier, and only the second half
// is new: about 1,700 multiply-adds per analysed hop (3,300 after an
// unvoiced one). No allocation.
func (c *collector) pitch(hop []int16, voiced bool) {
	copy(c.pbuf[:], c.pbuf[pitchHop:])
	d := c.pbuf[pitchBuf-pitchHop:]
	hop = hop[:2*len(d)]
	for i := range d {
		d[i] = 0.5 * (float32(hop[2*i]) + float32(hop[2*i+1]))
	}
	halfOK := c.pHalfOK
	c.pHalfOK = false
	if c.pfill < 4 {
		c.pfill++
	}
	if !voiced {
		return
	}
	k := c.pvoice % pitchQueue
	c.pvoice++
	c.pq[k] = 0
	if c.pfill < 4 {
		return
	}
	x := (*[pitchBuf - pitchStart]float32)(c.pbuf[pitchStart:])
	if !halfOK {
		halfCorrs(&c.pHalf, (*[pitchHop + pitchMaxLag]float32)(x[:]))
	}
	copy(c.pr[:], c.pHalf[:])
	halfCorrs(&c.pHalf, (*[pitchHop + pitchMaxLag]float32)(x[pitchHop:]))
	for l := pitchMinLag; l <= pitchMaxLag; l++ {
		c.pr[l] += c.pHalf[l]
	}
	c.pHalfOK = true
	var e0 float32
	for _, v := range x[:pitchWin] {
		e0 += v * v
	}
	if e0 < 1 {
		return
	}
	var e1 float32
	for _, v := range x[pitchMinLag : pitchMinLag+pitchWin] {
		e1 += v * v
	}
	best := float32(0)
	for l := pitchMinLag; l <= pitchMaxLag; l++ {
		if l > pitchMinLag {
			a, b := x[l+pitchWin-1], x[l-1]
			e1 += a*a - b*b
		}
		r := float32(0)
		if e1 > 0 {
			r = c.pr[l] / float32(math.Sqrt(float64(e0*e1)))
		}
		c.pr[l] = r
		best = max(best, r)
	}
	if best < pitchMinCorr {
		return
	}
	for l := pitchMinLag + 1; l < pitchMaxLag; l++ {
		r := c.pr[l]
		if r < pitchPeak*best || r < c.pr[l-1] || r < c.pr[l+1] {
			continue
		}
		lag := float64(l)
		if den := c.pr[l-1] - 2*r + c.pr[l+1]; den < 0 {
			lag += float64(0.5 * (c.pr[l-1] - c.pr[l+1]) / den)
		}
		f := 4000 / lag
		bin := int(pitchBinsPer * 12 * math.Log2(f/pitchBase))
		c.pq[k] = uint8(max(0, min(bin, pitchBins-1)) + 1)
		return
	}
}

// halfCorrs writes into dst, for every lag l from pitchMinLag to
// pitchMaxLag, the correlation of x's first hop (at 4 kHz) with x from l
// on, summed in four interleaved partial sums (elements i mod 4) added at
// the end.
func halfCorrs(dst *[pitchMaxLag + 1]float32, x *[pitchHop + pitchMaxLag]float32) {
	w := (*[pitchHop]float32)(x[:])
	for l := pitchMinLag; l <= pitchMaxLag; l++ {
		y := (*[pitchHop]float32)(x[l:])
		var s0, s1, s2, s3 float32
		for i := 0; i < pitchHop; i += 4 {
			s0 += w[i] * y[i]
			s1 += w[i+1] * y[i+1]
			s2 += w[i+2] * y[i+2]
			s3 += w[i+3] * y[i+3]
		}
		dst[l] = s0 + s1 + s2 + s3
	}
}

// pitchMinSpread bounds from below the pitch spread (semitones) by which
// a pitch shift is divided: a synthetic voice can be nearly monotone.
const pitchMinSpread = 0.5

// iqrPerSigma is the interquartile range of a normal distribution in
// standard deviations.
const iqrPerSigma = 1.349

// pitchQuantile returns the q-quantile of h in semitones above pitchBase.
func pitchQuantile(h *[pitchBins]uint32, q float64) float64 {
	var n uint32
	for _, v := range h {
		n += v
	}
	var acc uint32
	for i, v := range h {
		acc += v
		if float64(acc) >= q*float64(n) && n > 0 {
			return (float64(i) + 0.5) / pitchBinsPer
		}
	}
	return 0
}

// pitchMedian returns the median bin of h in semitones above pitchBase
// and the number of frames in h.
func pitchMedian(h *[pitchBins]uint32) (float64, int) {
	var n uint32
	for _, v := range h {
		n += v
	}
	return pitchQuantile(h, 0.5), int(n)
}

// percentile returns the level in dB (bin centre) below which a fraction q
// of the histogram's hops lie, and false for an empty histogram.
func percentile(h *[histBins]uint32, q float64) (float64, bool) {
	var n uint64
	for _, v := range h {
		n += uint64(v)
	}
	if n == 0 {
		return 0, false
	}
	want := uint64(q * float64(n))
	var acc uint64
	for i, v := range h {
		acc += uint64(v)
		if acc > want {
			return (float64(i) + 0.5) / 2, true
		}
	}
	return float64(histBins) / 2, true
}

func (c *collector) hopCount(voiced int) (n uint64) {
	for _, v := range c.hist[voiced] {
		n += uint64(v)
	}
	return n
}

// snrDB estimates the signal-to-noise ratio: mean power of the voiced hops
// against a noise floor taken as the 30th percentile of the unvoiced hops'
// energies (or, with fewer than 50 unvoiced hops, the 5th percentile of
// the voiced ones), clamped to [−10, 60] dB.
func (c *collector) snrDB() float64 {
	nv := c.hopCount(1)
	if nv == 0 {
		return -10
	}
	var noiseDB float64
	if c.hopCount(0) >= 50 {
		noiseDB, _ = percentile(&c.hist[0], 0.3)
	} else {
		noiseDB, _ = percentile(&c.hist[1], 0.05)
	}
	pn := math.Pow(10, noiseDB/10) // ≥ 1: the histogram is of ms+1
	ps := c.voicedPower/float64(nv) + 1
	snr := 10 * math.Log10(math.Max(ps-pn, 1e-3*pn)/pn)
	return math.Max(-10, math.Min(60, snr))
}

// clipping is the fraction of voiced samples at full scale.
func (c *collector) clipping() float64 {
	if c.voicedSamples == 0 {
		return 0
	}
	return float64(c.clipped) / float64(c.voicedSamples)
}

const (
	loopHamming    = 9   // of 32 bits may differ between matching frames (1 % of independent random pairs match)
	loopMinLag     = 30  // frames: shorter repetitions are not loops
	loopMinOverlap = 200 // frames compared at a lag at least
)

// loop returns the largest fraction of voiced frames that match the frame
// lag frames earlier (within ±1 frame), over all lags, and that lag. A
// stretch of audio replayed in a loop repeats its frames at the loop's
// period, so the fraction approaches 1; different speech stays near the
// chance rate of a match.
//
// Frame i matches at lag l when it is near frame i−l−1, i−l or i−l+1. The
// comparisons at one distance d serve three lags (d−1, d and d+1), so each
// distance is compared once, into a bit set over i, and a lag's count is
// the population of the union of three neighbouring sets: a third of the
// comparisons of checking every lag directly, with the same result
// (TestLoopMatchesDirect). The comparisons run 64 at a time (nearWords;
// with AVX2, eight per instruction). It runs once per collection.
func (c *collector) loop() (frac float64, lag int) {
	n := min(c.ringN, ringFrames)
	if loopMinLag+1 >= n-loopMinOverlap {
		return 0, 0
	}
	// fp[pad+i] is frame i, oldest first. A distance d's comparisons
	// start at the word holding bit d, so its first frames (those below
	// d, cleared afterwards) meet the pad instead of frames before the
	// first.
	const pad = 64
	var fp [pad + ringFrames]uint32
	start := c.ringN - n
	for i := range n {
		fp[pad+i] = c.ring[(start+i)%ringFrames]
	}
	const words = ringFrames / 64
	// near(d) sets bit i when frame i is near frame i−d, for i in
	// [d, n−1): whole words of 64 comparisons from the one holding bit
	// d, the bits outside the range cleared.
	near := func(dst *[words]uint64, d int) {
		*dst = [words]uint64{}
		end := n - 1
		w0, w1 := d>>6, (end+63)>>6
		nearWords(dst[w0:w1], fp[pad+64*w0:], fp[pad+64*w0-d:])
		dst[w0] &^= 1<<uint(d&63) - 1
		if end&63 != 0 {
			dst[w1-1] &= 1<<uint(end&63) - 1
		}
	}
	var sets [3][words]uint64 // distances l−1, l, l+1, by d mod 3
	near(&sets[(loopMinLag-1)%3], loopMinLag-1)
	near(&sets[loopMinLag%3], loopMinLag)
	for l := loopMinLag; l+1 < n-loopMinOverlap; l++ {
		near(&sets[(l+1)%3], l+1)
		a, b, d := &sets[0], &sets[1], &sets[2]
		// Count i in [l+1, n−1): the words below l+1 are masked.
		m := 0
		lo := (l + 1) >> 6
		for w := lo; w <= (n-2)>>6; w++ {
			u := a[w] | b[w] | d[w]
			if w == lo {
				u &^= 1<<((l+1)&63) - 1
			}
			m += bits.OnesCount64(u)
		}
		if f := float64(m) / float64(n-l-2); f > frac {
			frac, lag = f, l
		}
	}
	return frac, lag
}

// pitchMinFrames is the number of pitch estimates each side of a segment
// boundary needs for the pitch comparison: half a second of periodic
// voice.
const pitchMinFrames = 50

// consistency looks for a change of speaker: for every boundary between
// two time segments with at least minSideFrames of voice on each side it
// computes the whitened MAP mean offsets of the audio before and after
// it, projected away from the nuisance directions, and their cosine, and
// the median and interquartile range of the pitch of each side. It
// returns the lowest cosine, the largest difference of median pitch in
// semitones and the largest in units of the two sides' spread (the mean
// of their interquartile ranges as a standard deviation, at least
// pitchMinSpread; both 0 when no boundary has pitchMinFrames estimates
// each side), and the number of segments (the partial last one
// included). With less than 2·minSideFrames of voice it returns 1, 0, 0:
// too little voice to compare.
func (c *collector) consistency() (cons, shift, shiftZ float64, segs int) {
	g := c.m.g
	nb := c.nDone
	if c.cur.frames > 0 {
		nb++ // the partial segment stands alone
	}
	if c.frames < 2*minSideFrames {
		return 1, 0, 0, nb
	}
	var preP, postP [pitchBins]uint32
	// The statistics before a boundary grow segment by segment; those
	// after it are the rest of the total.
	total, pre, post := newStats(g), newStats(g), newStats(g)
	c.total(&total)
	oa := make([]float32, g.k*g.d)
	ob := make([]float32, g.k*g.d)
	// The nuisance sums of the total, before and after the boundary, and
	// the two sides' coefficients (see nuisanceSums).
	rank := len(c.m.nuisance)
	sumT, sumA, sumB := make([]float64, rank*g.k), make([]float64, rank*g.k), make([]float64, rank*g.k)
	ua, ub := make([]float64, rank), make([]float64, rank)
	c.m.nuisanceSums(sumT, &total)
	worst := 1.0
	for b := 0; b+1 < nb; b++ {
		c.addPacked(&pre, &c.done[b]) // b+1 < nb ≤ nDone+1: a completed segment
		for j := range preP {
			preP[j] += c.doneP[b][j]
		}
		if pre.frames < minSideFrames || c.frames-pre.frames < minSideFrames {
			continue
		}
		postP = c.curP
		for j := b + 1; j < c.nDone; j++ {
			for i := range postP {
				postP[i] += c.doneP[j][i]
			}
		}
		ma, pa := pitchMedian(&preP)
		mb, pb := pitchMedian(&postP)
		if pa >= pitchMinFrames && pb >= pitchMinFrames {
			d := math.Abs(ma - mb)
			spread := (pitchQuantile(&preP, 0.75) - pitchQuantile(&preP, 0.25) +
				pitchQuantile(&postP, 0.75) - pitchQuantile(&postP, 0.25)) / 2 / iqrPerSigma
			shift = math.Max(shift, d)
			shiftZ = math.Max(shiftZ, d/math.Max(spread, pitchMinSpread))
		}
		post.difference(&total, &pre)
		g.offsets(oa, &pre)
		g.offsets(ob, &post)
		c.m.nuisanceSums(sumA, &pre)
		for i, t := range sumT {
			sumB[i] = t - sumA[i]
		}
		c.m.nuisanceCoefficients(ua, sumA, &pre)
		c.m.nuisanceCoefficients(ub, sumB, &post)
		worst = math.Min(worst, projectedCosine(oa, ob, ua, ub))
	}
	return worst, shift, shiftZ, nb
}
