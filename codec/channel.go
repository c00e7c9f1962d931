package codec

import "github.com/zaf/g711"

// AppendChannel appends the samples of one channel of interleaved PCM to dst
// and returns the extended slice. src holds frames of channels samples each
// (for AudioHook, in the order of the negotiated channels array); channel is
// the 0-based index of the channel to keep. A channel count below one returns
// ErrChannelCount, an index outside [0, channels) ErrChannelIndex, and a src
// that is not a whole number of frames ErrPartialFrame; on error dst is
// returned unchanged. It allocates only when dst lacks capacity.
func AppendChannel(dst []int16, src []int16, channels, channel int) ([]int16, error) {
	if err := checkInterleaved(len(src), channels, channel); err != nil {
		return dst, err
	}
	if channels == 1 {
		return append(dst, src...), nil
	}
	dst, out := grow(dst, len(src)/channels)
	for i := range out {
		out[i] = src[i*channels+channel]
	}
	return dst, nil
}

// AppendMuLawChannel appends the decoding of one channel of interleaved G.711
// µ-law to dst and returns the extended slice, without decoding the other
// channels or using an intermediate buffer: the live AudioHook path receives
// stereo frames and needs only one leg. Arguments and errors are those of
// AppendChannel, with one byte per sample.
func AppendMuLawChannel(dst []int16, src []byte, channels, channel int) ([]int16, error) {
	if err := checkInterleaved(len(src), channels, channel); err != nil {
		return dst, err
	}
	if channels == 1 {
		return AppendMuLaw(dst, src), nil
	}
	if len(src) == 0 {
		return dst, nil
	}
	dst, out := grow(dst, len(src)/channels)
	if channels == 2 {
		s := src[channel:]
		for i := range out {
			out[i] = g711.DecodeUlawFrame(s[2*i])
		}
		return dst, nil
	}
	for i := range out {
		out[i] = g711.DecodeUlawFrame(src[i*channels+channel])
	}
	return dst, nil
}

// AppendALawChannel is AppendMuLawChannel for G.711 A-law.
func AppendALawChannel(dst []int16, src []byte, channels, channel int) ([]int16, error) {
	if err := checkInterleaved(len(src), channels, channel); err != nil {
		return dst, err
	}
	if channels == 1 {
		return AppendALaw(dst, src), nil
	}
	dst, out := grow(dst, len(src)/channels)
	for i := range out {
		out[i] = g711.DecodeAlawFrame(src[i*channels+channel])
	}
	return dst, nil
}

// AppendL16Channel is AppendMuLawChannel for little-endian 16-bit PCM: two
// bytes per sample, so a frame is 2*channels bytes. An odd byte count returns
// ErrOddLength.
func AppendL16Channel(dst []int16, src []byte, channels, channel int) ([]int16, error) {
	if len(src)%2 != 0 {
		return dst, ErrOddLength
	}
	if err := checkInterleaved(len(src)/2, channels, channel); err != nil {
		return dst, err
	}
	dst, out := grow(dst, len(src)/(2*channels))
	for i := range out {
		j := 2 * (i*channels + channel)
		b := src[j : j+2 : j+2]
		out[i] = int16(uint16(b[0]) | uint16(b[1])<<8)
	}
	return dst, nil
}

// checkInterleaved validates an interleaved buffer of n samples.
func checkInterleaved(n, channels, channel int) error {
	switch {
	case channels < 1:
		return ErrChannelCount
	case channel < 0 || channel >= channels:
		return ErrChannelIndex
	case n%channels != 0:
		return ErrPartialFrame
	}
	return nil
}
