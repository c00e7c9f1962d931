package codec

import (
	"fmt"
	"strconv"
)

// Encoding names how samples are coded on the wire or in a file. The zero
// value is not a valid encoding, so a forgotten field is caught rather than
// read as µ-law.
type Encoding uint8

// The encodings Earshot accepts.
const (
	// MuLaw is ITU-T G.711 µ-law, 8 bits per sample (REST "mulaw",
	// AudioHook and RTP "PCMU", WAV format tag 7).
	MuLaw Encoding = 1 + iota
	// ALaw is ITU-T G.711 A-law, 8 bits per sample (REST "alaw", RTP
	// "PCMA", WAV format tag 6).
	ALaw
	// L16 is signed 16-bit linear PCM, little-endian (REST "pcm16" with
	// sample_format "s16le", AudioHook "L16", WAV format tag 1).
	L16
)

// ParseEncoding returns the Encoding a name stands for. It accepts the REST
// API's audio_codec values "mulaw", "alaw" and "pcm16", and the AudioHook/RTP
// media format names "PCMU", "PCMA" and "L16", exactly as written (names are
// case-sensitive, as in the protocols). Any other name returns
// ErrUnknownEncoding, wrapped with the name.
func ParseEncoding(name string) (Encoding, error) {
	switch name {
	case "mulaw", "PCMU":
		return MuLaw, nil
	case "alaw", "PCMA":
		return ALaw, nil
	case "pcm16", "L16":
		return L16, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrUnknownEncoding, name)
}

// String returns the REST API name of e ("mulaw", "alaw", "pcm16"), which is
// also what ParseEncoding accepts and what metrics use as the codec label. An
// invalid value prints as "Encoding(N)".
func (e Encoding) String() string {
	switch e {
	case MuLaw:
		return "mulaw"
	case ALaw:
		return "alaw"
	case L16:
		return "pcm16"
	}
	return "Encoding(" + strconv.Itoa(int(e)) + ")"
}

// BytesPerSample returns the size of one coded sample of one channel: 1 for
// G.711, 2 for L16, 0 for an invalid Encoding.
func (e Encoding) BytesPerSample() int {
	switch e {
	case MuLaw, ALaw:
		return 1
	case L16:
		return 2
	}
	return 0
}

// AppendDecode appends the decoding of src in encoding enc to dst, as
// AppendMuLaw, AppendALaw or AppendL16 do. An invalid enc returns
// ErrUnknownEncoding and L16 with an odd byte count ErrOddLength; on error dst
// is returned unchanged.
func AppendDecode(enc Encoding, dst []int16, src []byte) ([]int16, error) {
	switch enc {
	case MuLaw:
		return AppendMuLaw(dst, src), nil
	case ALaw:
		return AppendALaw(dst, src), nil
	case L16:
		return AppendL16(dst, src)
	}
	return dst, ErrUnknownEncoding
}

// AppendDecodeChannel appends the decoding of one channel of interleaved src
// in encoding enc to dst, as AppendMuLawChannel, AppendALawChannel or
// AppendL16Channel do. An invalid enc returns ErrUnknownEncoding.
func AppendDecodeChannel(enc Encoding, dst []int16, src []byte, channels, channel int) ([]int16, error) {
	switch enc {
	case MuLaw:
		return AppendMuLawChannel(dst, src, channels, channel)
	case ALaw:
		return AppendALawChannel(dst, src, channels, channel)
	case L16:
		return AppendL16Channel(dst, src, channels, channel)
	}
	return dst, ErrUnknownEncoding
}

// AppendEncode appends the encoding of src in enc to dst, as
// AppendMuLawEncode, AppendALawEncode or AppendL16Encode do. An invalid enc
// returns dst unchanged and ErrUnknownEncoding.
func AppendEncode(enc Encoding, dst []byte, src []int16) ([]byte, error) {
	switch enc {
	case MuLaw:
		return AppendMuLawEncode(dst, src), nil
	case ALaw:
		return AppendALawEncode(dst, src), nil
	case L16:
		return AppendL16Encode(dst, src), nil
	}
	return dst, ErrUnknownEncoding
}
