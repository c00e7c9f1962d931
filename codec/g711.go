package codec

import (
	"slices"

	"github.com/zaf/g711"
)

// The decoders call g711.DecodeUlawFrame and g711.DecodeAlawFrame once per
// sample; both inline to a lookup in the library's own 256-entry table, so
// the library stays the only source of the code values. The loops are
// unrolled by four: on the reference machine that made the 160-byte frame
// decode as fast as a package-level copy of the table (about 55 ns instead
// of 95 ns), without keeping a second table in this package.

// AppendMuLaw appends the 16-bit linear PCM decoding of the G.711 µ-law bytes
// in src to dst and returns the extended slice. Each byte is one sample; any
// length is valid. It allocates only when dst lacks capacity.
func AppendMuLaw(dst []int16, src []byte) []int16 {
	dst, out := grow(dst, len(src))
	i := 0
	for ; i+4 <= len(src); i += 4 {
		s := src[i : i+4 : i+4]
		o := out[i : i+4 : i+4]
		o[0] = g711.DecodeUlawFrame(s[0])
		o[1] = g711.DecodeUlawFrame(s[1])
		o[2] = g711.DecodeUlawFrame(s[2])
		o[3] = g711.DecodeUlawFrame(s[3])
	}
	for ; i < len(src); i++ {
		out[i] = g711.DecodeUlawFrame(src[i])
	}
	return dst
}

// AppendALaw appends the 16-bit linear PCM decoding of the G.711 A-law bytes
// in src to dst and returns the extended slice. Each byte is one sample; any
// length is valid. It allocates only when dst lacks capacity.
func AppendALaw(dst []int16, src []byte) []int16 {
	dst, out := grow(dst, len(src))
	i := 0
	for ; i+4 <= len(src); i += 4 {
		s := src[i : i+4 : i+4]
		o := out[i : i+4 : i+4]
		o[0] = g711.DecodeAlawFrame(s[0])
		o[1] = g711.DecodeAlawFrame(s[1])
		o[2] = g711.DecodeAlawFrame(s[2])
		o[3] = g711.DecodeAlawFrame(s[3])
	}
	for ; i < len(src); i++ {
		out[i] = g711.DecodeAlawFrame(src[i])
	}
	return dst
}

// AppendMuLawEncode appends the G.711 µ-law encoding of the samples in src to
// dst, one byte per sample, and returns the extended slice. Encoding is lossy:
// AppendMuLaw of the result differs from src by the µ-law quantisation step.
// It allocates only when dst lacks capacity.
func AppendMuLawEncode(dst []byte, src []int16) []byte {
	dst, out := grow(dst, len(src))
	for i, v := range src {
		out[i] = g711.EncodeUlawFrame(v)
	}
	return dst
}

// AppendALawEncode appends the G.711 A-law encoding of the samples in src to
// dst, one byte per sample, and returns the extended slice. Encoding is lossy:
// AppendALaw of the result differs from src by the A-law quantisation step.
// It allocates only when dst lacks capacity.
func AppendALawEncode(dst []byte, src []int16) []byte {
	dst, out := grow(dst, len(src))
	for i, v := range src {
		out[i] = g711.EncodeAlawFrame(v)
	}
	return dst
}

// grow extends dst by n elements and returns the extended slice and its new
// tail of exactly n elements, which the caller overwrites.
func grow[E any](dst []E, n int) (all, tail []E) {
	l := len(dst)
	dst = slices.Grow(dst, n)[:l+n]
	return dst, dst[l : l+n : l+n]
}
