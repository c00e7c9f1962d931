package codec

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/zaf/g711"
)

// allCodes returns the 256 byte values in order.
func allCodes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// TestG711MatchesLibrary checks every one of the 256 codes, at every offset
// of the unrolled loop, against github.com/zaf/g711, the source of truth:
// both its per-sample function and its whole-buffer decoder.
func TestG711MatchesLibrary(t *testing.T) {
	tests := []struct {
		name   string
		decode func([]int16, []byte) []int16
		frame  func(uint8) int16
		buffer func([]byte) []byte
	}{
		{"mulaw", AppendMuLaw, g711.DecodeUlawFrame, g711.DecodeUlaw},
		{"alaw", AppendALaw, g711.DecodeAlawFrame, g711.DecodeAlaw},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			codes := allCodes()
			lib := tt.buffer(codes)
			for skip := range 4 { // every alignment of the four-way unrolling
				got := tt.decode(nil, codes[skip:])
				if len(got) != 256-skip {
					t.Fatalf("skip %d: %d samples, want %d", skip, len(got), 256-skip)
				}
				for i, v := range got {
					c := codes[skip+i]
					if want := tt.frame(c); v != want {
						t.Errorf("code 0x%02X: %d, library frame function says %d", c, v, want)
					}
					if want := int16(binary.LittleEndian.Uint16(lib[2*int(c):])); v != want {
						t.Errorf("code 0x%02X: %d, library buffer function says %d", c, v, want)
					}
				}
			}
		})
	}
}

func TestAppendMuLaw(t *testing.T) {
	tests := []struct {
		name string
		dst  []int16
		src  []byte
		want []int16
	}{
		{"nil", nil, nil, nil},
		{"empty src keeps dst", []int16{7}, []byte{}, []int16{7}},
		// ITU-T G.711 µ-law: 0x00 and 0x80 are the extremes, 0xFF and 0x7F
		// the two zeros, 0xF0 the first code above the smallest segment.
		{"anchors", nil, []byte{0x00, 0x80, 0xFF, 0x7F, 0xF0, 0x70}, []int16{-32124, 32124, 0, 0, 120, -120}},
		{"appends after prefix", []int16{1, 2}, []byte{0x80}, []int16{1, 2, 32124}},
		{"odd tail", nil, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0x80}, []int16{0, 0, 0, 0, 32124}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := slices.Clone(tt.dst)
			got := AppendMuLaw(dst, tt.src)
			if !slices.Equal(got, tt.want) {
				t.Errorf("AppendMuLaw(%v, %x) = %v, want %v", tt.dst, tt.src, got, tt.want)
			}
		})
	}
}

func TestAppendALaw(t *testing.T) {
	tests := []struct {
		name string
		dst  []int16
		src  []byte
		want []int16
	}{
		{"nil", nil, nil, nil},
		{"empty src keeps dst", []int16{7}, []byte{}, []int16{7}},
		// ITU-T G.711 A-law (even bits inverted): 0xD5 and 0x55 are the
		// smallest magnitudes, ±8; 0xAA and 0x2A the extremes, ±32256.
		{"anchors", nil, []byte{0xD5, 0x55, 0xAA, 0x2A, 0x80, 0xFF}, []int16{8, -8, 32256, -32256, 5504, 848}},
		{"appends after prefix", []int16{-1}, []byte{0xD5, 0xD5}, []int16{-1, 8, 8}},
		{"odd tail", nil, []byte{0xD5, 0xD5, 0xD5, 0xD5, 0xD5, 0x55}, []int16{8, 8, 8, 8, 8, -8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendALaw(slices.Clone(tt.dst), tt.src)
			if !slices.Equal(got, tt.want) {
				t.Errorf("AppendALaw(%v, %x) = %v, want %v", tt.dst, tt.src, got, tt.want)
			}
		})
	}
}

// TestG711Encode checks the encoders against the library for every 16-bit
// value, the quantisation error of a round trip, and that every code
// survives decode then encode.
func TestG711Encode(t *testing.T) {
	tests := []struct {
		name   string
		encode func([]byte, []int16) []byte
		decode func([]int16, []byte) []int16
		frame  func(int16) uint8
		// codes whose decoded value encodes to another code: µ-law's
		// negative zero 0x7F decodes to 0, which encodes as 0xFF.
		aliases map[byte]byte
	}{
		{"mulaw", AppendMuLawEncode, AppendMuLaw, g711.EncodeUlawFrame, map[byte]byte{0x7F: 0xFF}},
		{"alaw", AppendALawEncode, AppendALaw, g711.EncodeAlawFrame, nil},
	}
	all := make([]int16, 0, 1<<16)
	for v := -32768; v <= 32767; v++ {
		all = append(all, int16(v))
	}
	for _, tt := range tests {
		t.Run(tt.name+"/library", func(t *testing.T) {
			got := tt.encode([]byte{0xEE}, all)
			if got[0] != 0xEE || len(got) != 1+len(all) {
				t.Fatalf("prefix or length wrong: %d bytes, first 0x%02X", len(got), got[0])
			}
			for i, v := range all {
				if want := tt.frame(v); got[1+i] != want {
					t.Fatalf("encode(%d) = 0x%02X, library says 0x%02X", v, got[1+i], want)
				}
			}
		})
		t.Run(tt.name+"/quantisation", func(t *testing.T) {
			// G.711 keeps 4 mantissa bits per segment: the error is at
			// most half a step, 1/32 of the segment's base for A-law and
			// a little more for µ-law's biased segments; 1/16 of the
			// magnitude bounds both, clipping of the top values included,
			// and 8 bounds the smallest segment.
			back := tt.decode(nil, tt.encode(nil, all))
			for i, v := range all {
				err := abs(int(v) - int(back[i]))
				if limit := max(8, abs(int(v))/16); err > limit {
					t.Errorf("%d decodes back as %d: error %d > %d", v, back[i], err, limit)
				}
			}
		})
		t.Run(tt.name+"/codes", func(t *testing.T) {
			codes := allCodes()
			again := tt.encode(nil, tt.decode(nil, codes))
			for c := range 256 {
				want := byte(c)
				if a, ok := tt.aliases[want]; ok {
					want = a
				}
				if again[c] != want {
					t.Errorf("code 0x%02X re-encodes as 0x%02X, want 0x%02X", c, again[c], want)
				}
			}
		})
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
