package codec

// Decimator design. A half-band low-pass FIR filter, applied at 16 kHz, with
// every other output kept:
//
//   - 79 taps, linear phase (symmetric). As in every half-band filter, the
//     centre tap is exactly 1/2 and the taps at even distances from it are
//     zero, so each output costs 20 multiplications (one per symmetric pair
//     of the 40 non-zero side taps) plus the centre.
//   - Design: the ideal half-band response sin(πk/2)/(πk) (cutoff fs/4 =
//     4000 Hz) times a Kaiser window with β = 9.15, the side taps scaled so
//     the DC gain is exactly 1, quantised to Q30 with the rounding residue
//     added to h1. TestDecimatorTaps re-derives these constants.
//   - Measured response of the quantised taps (TestDecimatorResponse, on a
//     0.25 Hz grid): passband 0-3400 Hz flat within 0.0003 dB; -3 dB at
//     about 3900 Hz; -6.02 dB at 4000 Hz; stopband 4600-8000 Hz at least
//     91.3 dB down (the worst point is near 4724 Hz). Aliases of 4000-4600 Hz
//     fold onto 3400-4000 Hz, above the telephone band, so the 300-3400 Hz
//     band that 8 kHz telephone audio carries is free of aliasing to 91 dB,
//     below the 16-bit output's own quantisation noise.
//   - Group delay: 39 input samples = 19.5 output samples (2.44 ms).
//
// The taps are constants and the sum is unrolled: no table, no global state,
// and a zero Decimator is ready to use.
const (
	decimTaps = 79
	decimHist = decimTaps - 1 // input samples a window needs besides the newest
	decimQ    = 30            // fixed-point scale of the taps

	h0  = 1 << (decimQ - 1) // the centre tap, 0.5
	h1  = 340813603
	h3  = -111050034
	h5  = 63656418
	h7  = -42440957
	h9  = 30086898
	h11 = -21892954
	h13 = 16059777
	h15 = -11747011
	h17 = 8502380
	h19 = -6052415
	h21 = 4214104
	h23 = -2854064
	h25 = 1868625
	h27 = -1173868
	h29 = 700579
	h31 = -391645
	h33 = 200569
	h35 = -90412
	h37 = 32819
	h39 = -6956
)

// Decimator converts a 16 kHz mono PCM stream to 8 kHz: it low-pass filters
// below 4 kHz with the half-band FIR filter described above and keeps every
// other sample. It keeps the last 78 input samples and the input parity
// between calls, so a stream gives the same output however it is cut into
// chunks. Stereo audio is de-interleaved first (AppendChannel), one Decimator
// per channel.
//
// Over a whole stream, n input samples give exactly (n+1)/2 output samples
// (output k is aligned with input 2k), delayed by the filter's 19.5 output
// samples; the stream starts from silence, and the last 39 inputs are
// represented only partly by the final outputs, as there is no flush.
//
// The zero value is ready to use. A Decimator is not safe for concurrent use.
type Decimator struct {
	hist    [decimHist]int16     // the last decimHist input samples, oldest first
	odd     bool                 // an odd number of samples has been consumed
	scratch [2 * decimHist]int16 // hist followed by the head of a new chunk
}

// Reset returns d to its zero state, to start a new stream.
func (d *Decimator) Reset() { *d = Decimator{} }

// Append filters and decimates the 16 kHz samples in src, appends the 8 kHz
// output to dst and returns the extended slice. It appends (len(src)+1)/2 or
// len(src)/2 samples, depending on the parity of the samples consumed so far.
// It allocates only when dst lacks capacity.
func (d *Decimator) Append(dst, src []int16) []int16 {
	first := 0 // index in src of the first sample that ends an output window
	if d.odd {
		first = 1
	}
	if len(src) <= first {
		d.consume(src)
		return dst
	}
	dst, out := grow(dst, (len(src)-first+1)/2)

	// Windows that reach back into the history: build them in scratch.
	head := min(len(src), decimHist)
	s := append(append(d.scratch[:0], d.hist[:]...), src[:head]...)
	o := 0
	j := first
	for ; j < head; j += 2 {
		out[o] = halfBand((*[decimTaps]int16)(s[j : j+decimTaps]))
		o++
	}
	// Windows entirely inside src.
	for ; j < len(src); j += 2 {
		out[o] = halfBand((*[decimTaps]int16)(src[j-decimHist : j+1]))
		o++
	}
	d.consume(src)
	return dst
}

// consume records src as the newest input samples.
func (d *Decimator) consume(src []int16) {
	if len(src) >= decimHist {
		copy(d.hist[:], src[len(src)-decimHist:])
	} else {
		n := copy(d.hist[:], d.hist[len(src):])
		copy(d.hist[n:], src)
	}
	d.odd = d.odd != (len(src)%2 == 1)
}

// halfBand returns the filter output for the window w, oldest sample first,
// rounded and saturated to 16 bits. The sum is split in two independent
// chains, which measured about a third faster than one chain of additions;
// integer addition is exact, so the result is the same.
func halfBand(w *[decimTaps]int16) int16 {
	const c = decimHist / 2 // the centre of the window
	p := func(k int) int64 { return int64(w[c-k]) + int64(w[c+k]) }
	a := h0*int64(w[c]) +
		h1*p(1) + h5*p(5) + h9*p(9) + h13*p(13) + h17*p(17) +
		h21*p(21) + h25*p(25) + h29*p(29) + h33*p(33) + h37*p(37)
	b := h3*p(3) + h7*p(7) + h11*p(11) + h15*p(15) + h19*p(19) +
		h23*p(23) + h27*p(27) + h31*p(31) + h35*p(35) + h39*p(39)
	v := (a + b + 1<<(decimQ-1)) >> decimQ
	return int16(max(-32768, min(32767, v)))
}
