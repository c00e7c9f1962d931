package codec

// AppendL16 appends the samples of little-endian 16-bit linear PCM (the REST
// API's "pcm16"/"s16le", AudioHook's "L16") in src to dst and returns the
// extended slice. An odd byte count returns dst unchanged and ErrOddLength.
// It allocates only when dst lacks capacity.
func AppendL16(dst []int16, src []byte) ([]int16, error) {
	if len(src)%2 != 0 {
		return dst, ErrOddLength
	}
	dst, out := grow(dst, len(src)/2)
	for i := range out {
		b := src[2*i : 2*i+2 : 2*i+2] // one bounds check per sample
		out[i] = int16(uint16(b[0]) | uint16(b[1])<<8)
	}
	return dst, nil
}

// AppendL16Encode appends the samples in src to dst as little-endian 16-bit
// linear PCM, two bytes per sample, and returns the extended slice. It
// allocates only when dst lacks capacity.
func AppendL16Encode(dst []byte, src []int16) []byte {
	dst, out := grow(dst, 2*len(src))
	for i, v := range src {
		b := out[2*i : 2*i+2 : 2*i+2]
		b[0], b[1] = byte(v), byte(uint16(v)>>8)
	}
	return dst
}
