package features

import (
	"math"
	"slices"

	"github.com/earshot-voice/earshot/dsp"
)

// Norm selects how the extractor normalises the vectors it emits.
type Norm int

const (
	// NormCentred subtracts from each vector's statics their mean over a
	// window of Options.NormWindow voiced frames centred on it: 149 frames
	// before, the frame itself and 150 after at the default 300, cut at the
	// start and end of the stream. Vectors therefore leave NormWindow/2
	// voiced frames late (1.5 s of voice), one per voiced frame, and Flush
	// releases the rest. This is cepstral mean normalisation as in Kaldi's
	// speaker-recognition recipes (a centred 300-frame window), except that
	// the window is cut rather than shifted at the start of the stream so
	// that output never bursts. It is the zero value and the default: in a
	// GMM-UBM test on Earshot's synthetic dev corpus it beat the trailing
	// window, whose first vectors are normalised with a few frames only.
	NormCentred Norm = iota
	// NormTrailing uses a window of the last NormWindow voiced frames
	// ending with the vector's own: no delay, but the first vectors of a
	// stream are normalised with the mean of the few frames so far (the
	// very first has all statics zero).
	NormTrailing
	// NormOff emits the vectors unnormalised, for a caller that normalises
	// a whole utterance after the fact with Normalize.
	NormOff
)

// Options configures an Extractor. The zero value gives the documented
// telephone-speech configuration: 8 kHz, 24 mel filters over 300–3400 Hz,
// 20 static coefficients (log energy and c1..c19) with deltas and
// delta-deltas (60 values per vector), mean normalisation over a centred
// window of 300 voiced frames.
type Options struct {
	// SampleRate of the PCM in Hz: 8000 or 16000. 0 means 8000. Windows are
	// 25 ms (200 or 400 samples), hops 10 ms (80 or 160 samples), FFTs 256
	// or 512 points: the same 31.25 Hz bin spacing at both rates.
	SampleRate int
	// NumCepstra is the number of static coefficients per frame, the log
	// frame energy (in place of c0) followed by c1..c(NumCepstra−1). The
	// vector has 3·NumCepstra values. 0 means 20; at most NumFilters.
	NumCepstra int
	// NumFilters is the number of triangular mel filters, 4..64. 0 means 24.
	NumFilters int
	// LowHz and HighHz bound the mel filterbank. 0 means 300 and 3400 Hz,
	// the telephone band, at both sample rates, so that features of 16 kHz
	// audio match models trained on 8 kHz calls. HighHz must not exceed
	// SampleRate/2.
	LowHz, HighHz float64
	// Norm selects the streaming normalisation: NormCentred (the
	// default), NormTrailing or NormOff.
	Norm Norm
	// NormWindow is the length in voiced frames of the normalisation
	// window, 2..30000 (5 minutes of voice). 0 means 300 (3 s).
	NormWindow int
	// NormVariance adds variance normalisation over all coefficients.
	// Without it only the static coefficients are mean-normalised: deltas
	// are differences, already free of a constant channel offset.
	NormVariance bool
}

const (
	preEmphasis = 0.97
	// powerFloor bounds the filter energies and the frame energy from below
	// before the logarithm. Both are mean squares per sample in int16 units
	// (see Extractor), so 1e-2 lies below the quantisation noise of 16-bit
	// audio (1/12 per sample) and far below that of G.711: only digital
	// silence reaches it, and it keeps the logarithm finite.
	powerFloor = 1e-2
	// deltaDelay is the emission delay in frames: 2 for the deltas and 2
	// more for the delta-deltas.
	deltaDelay = 4
	// maxNormWindow bounds Options.NormWindow: the window costs
	// 4·NumCepstra bytes per frame (12·NumCepstra with variance).
	maxNormWindow = 30000
	// Ring sizes (powers of two). Frame i's statics are needed when a
	// voiced frame lies within deltaDelay of it. Frame i is complete with
	// hop i+2; the last frame that can need it, i+4, is known to be voiced
	// with hop i+5, so the audio ring must hold hops i..i+5 (6, rounded up
	// to 8). Emitting frame j reads the statics of frames j−4..j+4 (9) and
	// the deltas of j−2..j+2 (5).
	hopRing   = 8
	statRing  = 16
	deltaRing = 8
)

// Extractor turns a stream of 10 ms PCM hops and their voice decisions into
// normalised MFCC vectors, one per voiced 25 ms frame. It is not safe for
// concurrent use: one goroutine owns it (in Earshot, the call's goroutine).
//
// Framing: frame k of a segment is the 25 ms of audio that ends with hop
// k+2 (the last 2.5 hops), so the first frame comes with the third hop and
// every hop after that adds one. Frame k is voiced when hop k+1, the hop
// that holds the frame's centre, was pushed with voiced true.
//
// Per frame (all in float64, emitted as float32): the log energy is
// ln(max(Σ(x−x̄)²/L, 0.01)) over the frame's L samples x with their mean x̄
// (DC) removed; the DC-free samples are pre-emphasised,
// y[t] = (x[t]−x̄) − 0.97·(x[t−1]−x̄), where x[t−1] is the sample before t in
// the stream (the first sample of a segment stands in for its own
// predecessor), multiplied by a Hamming window 0.54 − 0.46·cos(2πt/(L−1))
// scaled by 1/√L, zero-padded to 256 (512) points and transformed by a real
// FFT; the power spectrum goes through the mel filterbank, each filter
// energy is floored at 0.01 and its natural log taken, and an orthonormal
// DCT-II gives c1..c(NumCepstra−1). With the 1/√L scaling, energies are
// mean squares per sample in int16 units, comparable between 8 and 16 kHz.
// There is no liftering: a GMM with diagonal covariances is invariant to
// scaling a coefficient, so a lifter would change nothing but the numbers.
//
// Deltas and delta-deltas are the regression
// d[t] = Σ_{k=1,2} k·(c[t+k] − c[t−k]) / 10 over the continuous frame
// sequence, voiced or not, with the first and last frames of a segment
// repeated at its edges; delta-deltas apply the same regression to the
// deltas. A frame is therefore emitted 4 frames after it is computed, and
// Flush emits the frames still held back. The spectrum of a frame is only
// computed when a voiced frame lies within those 4 frames of it, so long
// unvoiced stretches cost little more than copying the audio.
type Extractor struct {
	hop, frameLen int
	skip          int // samples of a frame's first hop before the frame starts
	nc, nf, dim   int
	norm          Norm

	win  []float64 // Hamming window scaled by 1/√frameLen
	fft  *dsp.RealFFT
	fb   filterbank
	from int // first bin pair the filterbank needs from the FFT
	dct  dct
	pow  []float64 // nfft/2+1
	mel  []float64 // nf

	// Hop h of the segment, pre-emphasised, is in slot h&(hopRing−1) of
	// pre, with exact integer sums of its samples and squares over the
	// whole hop and from skip on.
	pre             []float64 // hopRing × hop
	sum, sq         [hopRing]int
	tailSum, tailSq [hopRing]int
	nHops           int     // hops pushed in the segment
	last            float64 // the last sample pushed

	// Frame i's statics are in slot i&(statRing−1) when statTag of that
	// slot is i, its deltas likewise; voiced[i&(statRing−1)] is its voice
	// decision once hop i+1 has been pushed.
	stat      []float64 // statRing × nc
	statTag   [statRing]int
	delta     []float64 // deltaRing × nc
	deltaTag  [deltaRing]int
	voiced    [statRing]bool
	needUntil int // the last frame whose statics a known voiced frame needs
	nDone     int // frames emitted or dropped as unvoiced

	sliding slidingNorm
}

// New returns an Extractor for opts, with every table precomputed. It
// returns ErrSampleRate, ErrNumFilters, ErrNumCepstra, ErrBand or ErrNorm
// for options it cannot honour.
func New(opts Options) (*Extractor, error) {
	rate := opts.SampleRate
	if rate == 0 {
		rate = 8000
	}
	var nfft int
	switch rate {
	case 8000:
		nfft = 256
	case 16000:
		nfft = 512
	default:
		return nil, ErrSampleRate
	}
	nf := opts.NumFilters
	if nf == 0 {
		nf = 24
	}
	if nf < 4 || nf > 64 {
		return nil, ErrNumFilters
	}
	nc := opts.NumCepstra
	if nc == 0 {
		nc = 20
	}
	if nc < 2 || nc > nf {
		return nil, ErrNumCepstra
	}
	low, high := opts.LowHz, opts.HighHz
	if low == 0 {
		low = 300
	}
	if high == 0 {
		high = 3400
	}
	if !(low > 0 && low < high && high <= float64(rate)/2) {
		return nil, ErrBand
	}
	win := opts.NormWindow
	if win == 0 {
		win = 300
	}
	if win < 2 || win > maxNormWindow || opts.Norm < NormCentred || opts.Norm > NormOff {
		return nil, ErrNorm
	}
	fb, err := newFilterbank(nf, nfft, rate, low, high)
	if err != nil {
		return nil, err
	}
	hop := rate / 100     // 10 ms
	frameLen := rate / 40 // 25 ms, 2.5 hops
	e := &Extractor{
		hop: hop, frameLen: frameLen, skip: 3*hop - frameLen,
		nc: nc, nf: nf, dim: 3 * nc,
		norm:  opts.Norm,
		win:   make([]float64, frameLen),
		fft:   dsp.NewRealFFT(nfft),
		fb:    fb,
		from:  min(fb.lo, nfft/2-fb.hi+1),
		dct:   newDCT(nc, nf),
		pow:   make([]float64, nfft/2+1),
		mel:   make([]float64, nf),
		pre:   make([]float64, hopRing*hop),
		stat:  make([]float64, statRing*nc),
		delta: make([]float64, deltaRing*nc),
	}
	e.resetSegment()
	scale := 1 / math.Sqrt(float64(frameLen))
	for t := range e.win {
		e.win[t] = scale * (0.54 - 0.46*math.Cos(2*math.Pi*float64(t)/float64(frameLen-1)))
	}
	if opts.Norm != NormOff {
		nd := nc
		if opts.NormVariance {
			nd = 3 * nc
		}
		ahead := 0
		if opts.Norm == NormCentred {
			ahead = win / 2
		}
		e.sliding = newSlidingNorm(3*nc, nd, win, ahead, opts.NormVariance)
	}
	return e, nil
}

// Dim is the number of float32 values in each emitted vector:
// 3·NumCepstra, laid out as NumCepstra statics (log energy, c1, c2, …),
// then their deltas, then their delta-deltas.
func (e *Extractor) Dim() int { return e.dim }

// HopSize is the number of samples in one 10 ms hop: 80 at 8 kHz, 160 at
// 16 kHz.
func (e *Extractor) HopSize() int { return e.hop }

// Append pushes pcm, a whole number of hops (possibly none) that all carry
// the voice decision voiced, and appends to dst the vectors that became
// ready: Dim() values each, at most one per hop. It returns the extended
// dst and the number of vectors appended, or ErrHopLength (and dst
// unchanged, nothing consumed) when len(pcm) is not a multiple of
// HopSize(). Append allocates only when dst must grow; with
// cap(dst)−len(dst) ≥ Dim()·len(pcm)/HopSize() it allocates nothing.
func (e *Extractor) Append(dst []float32, pcm []int16, voiced bool) ([]float32, int, error) {
	if len(pcm)%e.hop != 0 {
		return dst, 0, ErrHopLength
	}
	n := 0
	for ; len(pcm) > 0; pcm = pcm[e.hop:] {
		h := e.nHops
		e.pushHop(h, pcm[:e.hop])
		e.nHops++
		if h >= 1 {
			// Hop h holds the centre of frame h−1.
			v := h - 1
			e.voiced[v&(statRing-1)] = voiced
			if voiced {
				e.needUntil = max(e.needUntil, v+deltaDelay)
				// Frames v−4..v−2 are in the past; compute the ones
				// that were skipped while nothing near them was voiced.
				for i := max(0, v-deltaDelay); i < v-1; i++ {
					e.ensureStatic(i)
				}
			}
		}
		f := h - 2 // the frame that hop h completes
		if f < 0 {
			continue
		}
		if f <= e.needUntil {
			e.ensureStatic(f)
		}
		if f >= deltaDelay {
			var ok bool
			if dst, ok = e.emit(dst, f); ok {
				n++
			}
		}
	}
	return dst, n, nil
}

// Flush ends the current segment of audio: it appends to dst every vector
// still held back — by the delta context (at most 4 frames, computed with
// the last frame repeated in place of the frames that will not come) and by
// the look-ahead of NormCentred (at most NormWindow/2, normalised with the
// window cut at the last frame) — and returns the extended dst and the
// number appended. Samples of an incomplete frame are dropped. The next
// Append starts a new segment (framing and deltas start afresh, as after a
// gap in the audio) while the normalisation window keeps its frames; call
// Reset to forget them too. Flush allocates only when dst must grow, by at
// most Dim()·(4 + NormWindow/2) values.
func (e *Extractor) Flush(dst []float32) ([]float32, int) {
	n := 0
	last := e.nHops - 3 // the last complete frame
	for e.nDone <= last {
		var ok bool
		if dst, ok = e.emit(dst, last); ok {
			n++
		}
	}
	if e.norm != NormOff {
		var k int
		dst, k = e.sliding.drain(dst)
		n += k
	}
	e.resetSegment()
	return dst, n
}

// Reset returns the extractor to its state after New, forgetting the
// audio, the frames held back and the normalisation window.
func (e *Extractor) Reset() {
	e.resetSegment()
	e.sliding.reset()
}

func (e *Extractor) resetSegment() {
	e.nHops, e.nDone = 0, 0
	e.needUntil = -1
	for i := range e.statTag {
		e.statTag[i] = -1
	}
	for i := range e.deltaTag {
		e.deltaTag[i] = -1
	}
}

// pushHop pre-emphasises hop h into the ring and sums its samples.
func (e *Extractor) pushHop(h int, pcm []int16) {
	slot := h & (hopRing - 1)
	pre := e.pre[slot*e.hop : slot*e.hop+e.hop]
	pcm = pcm[:len(pre)]
	prev := e.last
	if h == 0 {
		prev = float64(pcm[0])
	}
	for i, x := range pcm {
		v := float64(x)
		pre[i] = v - preEmphasis*prev
		prev = v
	}
	e.last = prev
	// Integer sums are exact: a frame's Σx² is below 400·2³⁰.
	var s, q int
	for _, x := range pcm[:e.skip] {
		s += int(x)
		q += int(x) * int(x)
	}
	var ts, tq int
	for _, x := range pcm[e.skip:] {
		ts += int(x)
		tq += int(x) * int(x)
	}
	e.sum[slot], e.sq[slot] = s+ts, q+tq
	e.tailSum[slot], e.tailSq[slot] = ts, tq
}

// ensureStatic computes the statics of frame i unless they are in the ring.
// The frame's three hops must still be in the audio ring.
func (e *Extractor) ensureStatic(i int) {
	slot := i & (statRing - 1)
	if e.statTag[slot] == i {
		return
	}
	out := e.stat[slot*e.nc : slot*e.nc+e.nc]
	out[0] = e.logMel(i)
	e.dct.apply(out[1:], e.mel)
	e.statTag[slot] = i
}

// logMel leaves the log mel filter energies of frame i in e.mel and
// returns its log energy. The frame is hop i from skip on, then hops i+1
// and i+2.
func (e *Extractor) logMel(i int) float64 {
	a, b, c := i&(hopRing-1), (i+1)&(hopRing-1), (i+2)&(hopRing-1)
	sum := e.tailSum[a] + e.sum[b] + e.sum[c]
	sq := e.tailSq[a] + e.sq[b] + e.sq[c]
	L := float64(e.frameLen)
	mean := float64(sum) / L
	energy := float64(sq) - float64(sum)*mean // Σ(x − mean)²
	// Pre-emphasis is linear: removing the mean before it is subtracting
	// (1 − 0.97)·mean after it.
	dc := (1 - preEmphasis) * mean
	h := e.hop
	j := e.window(e.pre[a*h+e.skip:a*h+h], 0, dc)
	j = e.window(e.pre[b*h:b*h+h], j, dc)
	j = e.window(e.pre[c*h:c*h+h], j, dc)
	perm, re, im := e.fft.Input()
	for _, p := range perm[j:] {
		re[p], im[p] = 0, 0
	}
	e.fft.Transform()
	e.fft.PowerFrom(e.pow, e.from)
	e.fb.apply(e.mel, e.pow)
	for i, m := range e.mel {
		e.mel[i] = logPositive(max(m, powerFloor))
	}
	return logPositive(max(energy/L, powerFloor))
}

// window writes the samples seg (even length), less dc, times the window,
// to the FFT input as packed complex samples j, j+1, …, in bit-reversed
// order; seg starts at frame position 2j. It returns the next j.
func (e *Extractor) window(seg []float64, j int, dc float64) int {
	n := len(seg) / 2
	perm, re, im := e.fft.Input()
	perm = perm[j : j+n]
	w := e.win[2*j : 2*j+2*n]
	seg = seg[:2*n]
	for i, p := range perm {
		re[p] = (seg[2*i] - dc) * w[2*i]
		im[p] = (seg[2*i+1] - dc) * w[2*i+1]
	}
	return j + n
}

// regress writes Σ_{k=1,2} k·(x[t+k] − x[t−k]) / 10 into out, given the
// rows x[t−2], x[t−1], x[t+1], x[t+2].
func regress(out, m2, m1, p1, p2 []float64) {
	m2, m1, p1, p2 = m2[:len(out)], m1[:len(out)], p1[:len(out)], p2[:len(out)]
	for i := range out {
		out[i] = ((p1[i] - m1[i]) + 2*(p2[i]-m2[i])) * 0.1
	}
}

// statics returns frame i's statics, i clamped to [0, last]; they must be
// in the ring.
func (e *Extractor) statics(i, last int) []float64 {
	s := (min(max(i, 0), last) & (statRing - 1)) * e.nc
	return e.stat[s : s+e.nc]
}

// deltas returns frame i's deltas, i clamped to [0, last], computing them
// unless they are in the ring.
func (e *Extractor) deltas(i, last int) []float64 {
	i = min(max(i, 0), last)
	slot := i & (deltaRing - 1)
	out := e.delta[slot*e.nc : slot*e.nc+e.nc]
	if e.deltaTag[slot] != i {
		regress(out, e.statics(i-2, last), e.statics(i-1, last), e.statics(i+1, last), e.statics(i+2, last))
		e.deltaTag[slot] = i
	}
	return out
}

// emit finishes frame j = e.nDone, where last is the last frame whose
// statics are available (j+4, or the end of the segment): when j is voiced
// its vector goes to the normaliser, and the vector that the normaliser
// releases, if any (j's own unless NormCentred holds it back), is appended
// to dst.
func (e *Extractor) emit(dst []float32, last int) ([]float32, bool) {
	j := e.nDone
	e.nDone++
	if !e.voiced[j&(statRing-1)] {
		return dst, false
	}
	nc := e.nc
	// Deltas in order of increasing frame, so that a slot is never
	// overwritten while still needed (the ring holds 8).
	m2, m1 := e.deltas(j-2, last), e.deltas(j-1, last)
	d := e.deltas(j, last)
	p1, p2 := e.deltas(j+1, last), e.deltas(j+2, last)
	st := e.statics(j, last)
	n := len(dst)
	dst = slices.Grow(dst, e.dim)[:n+e.dim]
	v := dst[n:]
	vs, vd, vdd := v[:nc], v[nc:2*nc], v[2*nc:3*nc]
	st, d = st[:nc], d[:nc]
	m2, m1, p1, p2 = m2[:nc], m1[:nc], p1[:nc], p2[:nc]
	for i, x := range st {
		vs[i] = float32(x)
		vd[i] = float32(d[i])
		vdd[i] = float32(((p1[i] - m1[i]) + 2*(p2[i]-m2[i])) * 0.1)
	}
	if e.norm != NormOff && !e.sliding.add(v, v) {
		return dst[:n], false
	}
	return dst, true
}
