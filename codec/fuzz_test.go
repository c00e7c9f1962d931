package codec

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"testing/iotest"

	"github.com/zaf/g711"
)

// FuzzWAVReader feeds arbitrary bytes to the WAV reader: it must never
// panic, never allocate more than its fixed buffer, the caller's limit and
// small change, and agree with itself whether it reads in one piece or byte
// by byte.
func FuzzWAVReader(f *testing.F) {
	for _, tt := range wavHeaderErrorCases {
		f.Add(tt.data)
	}
	for _, tt := range wavReadCases {
		f.Add(tt.data)
	}
	fixtures, _ := filepath.Glob(filepath.Join("testdata", "*.wav"))
	for _, name := range fixtures {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 1 << 12 // samples
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		format, samples, err := ReadWAV(bytes.NewReader(data), limit)
		runtime.ReadMemStats(&after)
		// A WAVReader is ~4 KiB and the samples at most 8 KiB here;
		// whatever the header claims must not show up.
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
			t.Fatalf("ReadWAV of %d bytes allocated %d bytes", len(data), n)
		}
		if cap(samples) > limit {
			t.Fatalf("capacity %d beyond the limit %d", cap(samples), limit)
		}
		if err == nil {
			if cerr := format.check(); cerr != nil {
				t.Fatalf("accepted an invalid format %+v: %v", format, cerr)
			}
			if int64(len(samples)) != format.Frames*int64(format.Channels) {
				t.Fatalf("%d samples, format says %d frames of %d channels", len(samples), format.Frames, format.Channels)
			}
			if len(samples)*format.Encoding.BytesPerSample() > len(data) {
				t.Fatalf("%d samples out of %d bytes", len(samples), len(data))
			}
		}

		r, rerr := NewWAVReader(iotest.OneByteReader(bytes.NewReader(data)))
		if rerr != nil {
			if err == nil || err.Error() != rerr.Error() {
				t.Fatalf("byte by byte: %v; in one piece: %v", rerr, err)
			}
			return
		}
		got, rerr := readAll(r, 3)
		switch {
		case errors.Is(err, ErrTooLong):
			if rerr != nil || len(got) <= limit {
				t.Fatalf("ReadWAV: too long; byte by byte: %d samples, %v", len(got), rerr)
			}
		case err != nil:
			if rerr == nil || err.Error() != rerr.Error() {
				t.Fatalf("byte by byte: %v; in one piece: %v", rerr, err)
			}
		default:
			if rerr != nil || !slices.Equal(got, samples) {
				t.Fatalf("byte by byte: %d samples, %v; in one piece: %d samples", len(got), rerr, len(samples))
			}
		}
	})
}

// FuzzAppendMuLaw checks the decoder against the library for any input and
// any alignment, and that G.711 quantisation is idempotent.
func FuzzAppendMuLaw(f *testing.F) {
	f.Add([]byte{}, uint8(0))
	f.Add(allCodes(), uint8(3))
	f.Add([]byte{0x00, 0x80, 0xFF, 0x7F, 0xF0, 0x70}, uint8(1))
	f.Fuzz(func(t *testing.T, src []byte, prefix uint8) {
		dst := make([]int16, prefix%8)
		got := AppendMuLaw(dst, src)
		if len(got) != len(dst)+len(src) {
			t.Fatalf("%d samples, want %d", len(got), len(dst)+len(src))
		}
		for i, c := range src {
			if got[len(dst)+i] != g711.DecodeUlawFrame(c) {
				t.Fatalf("code 0x%02X decoded as %d", c, got[len(dst)+i])
			}
		}
		again := AppendMuLaw(nil, AppendMuLawEncode(nil, got[len(dst):]))
		if !slices.Equal(again, got[len(dst):]) {
			t.Fatalf("decoded µ-law does not survive a round trip")
		}
		alaw := AppendALaw(nil, src)
		for i, c := range src {
			if alaw[i] != g711.DecodeAlawFrame(c) {
				t.Fatalf("A-law code 0x%02X decoded as %d", c, alaw[i])
			}
		}
	})
}

// FuzzAppendL16 checks L16 decoding against its encoder.
func FuzzAppendL16(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x01, 0x00, 0xFF, 0xFF, 0x00, 0x80, 0xFF, 0x7F})
	f.Add([]byte{0x02, 0x00, 0x03})
	f.Fuzz(func(t *testing.T, src []byte) {
		got, err := AppendL16([]int16{7}, src)
		if len(src)%2 == 1 {
			if !errors.Is(err, ErrOddLength) || !slices.Equal(got, []int16{7}) {
				t.Fatalf("odd input: %v, %v", got, err)
			}
			return
		}
		if err != nil || len(got) != 1+len(src)/2 {
			t.Fatalf("%d samples, %v", len(got), err)
		}
		if back := AppendL16Encode(nil, got[1:]); !bytes.Equal(back, src) {
			t.Fatalf("encode(decode(x)) = %x, want %x", back, src)
		}
	})
}

// FuzzAppendChannel checks every de-interleaver against decoding everything
// and then AppendChannel.
func FuzzAppendChannel(f *testing.F) {
	for _, tt := range channelCases {
		f.Add(AppendL16Encode(nil, tt.src), tt.channels, tt.channel)
	}
	f.Fuzz(func(t *testing.T, data []byte, channels, channel int) {
		for _, enc := range []Encoding{MuLaw, ALaw, L16} {
			all, derr := AppendDecode(enc, nil, data)
			got, err := AppendDecodeChannel(enc, []int16{1}, data, channels, channel)
			if derr != nil {
				if !errors.Is(err, derr) {
					t.Fatalf("%v: %v, decoding all gives %v", enc, err, derr)
				}
				continue
			}
			want, werr := AppendChannel([]int16{1}, all, channels, channel)
			if !errors.Is(err, werr) || !errors.Is(werr, err) || !slices.Equal(got, want) {
				t.Fatalf("%v: %v, %v; want %v, %v", enc, got, err, want, werr)
			}
		}
	})
}

// FuzzDecimator checks that any input gives (n+1)/2 samples and the same
// output however it is cut into chunks.
func FuzzDecimator(f *testing.F) {
	f.Add([]byte{}, uint64(0))
	f.Add(AppendL16Encode(nil, []int16{0, 20000, 0, 0}), uint64(1))
	f.Add(AppendL16Encode(nil, slices.Repeat([]int16{-1234}, 200)), uint64(2))
	f.Add(AppendL16Encode(nil, slices.Repeat([]int16{32767, -32768}, 100)), uint64(3))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		in, _ := AppendL16(nil, data[:len(data)&^1])
		var whole Decimator
		want := whole.Append(nil, in)
		if len(want) != (len(in)+1)/2 {
			t.Fatalf("%d outputs for %d inputs", len(want), len(in))
		}
		rng := rand.New(rand.NewPCG(seed, seed>>1))
		var d Decimator
		var got []int16
		for rest := in; len(rest) > 0; {
			n := min(rng.IntN(2*decimTaps), len(rest))
			got = d.Append(got, rest[:n])
			rest = rest[n:]
		}
		if !slices.Equal(got, want) {
			t.Fatalf("chunked output differs")
		}
	})
}
