package features

import (
	"encoding/binary"
	"testing"
)

// FuzzExtractor feeds arbitrary samples, chunkings and voice decisions to
// extractors with each normalisation. The first byte picks the sample rate
// and options, the second the chunk size in hops; every following 2-byte
// pair is a little-endian sample, and bit 0 of each chunk's first sample
// is its voice decision. Whatever the input: no panic, no NaN or Inf, and
// whole vectors only.
func FuzzExtractor(f *testing.F) {
	seed := func(rate int, gen func(i int) int16, hops int) []byte {
		b := []byte{byte(rate/8000 - 1), 3}
		for i := 0; i < hops*rate/100; i++ {
			b = binary.LittleEndian.AppendUint16(b, uint16(gen(i)))
		}
		return b
	}
	for _, c := range inputCases() {
		f.Add(seed(8000, c.gen, 30))
		f.Add(seed(16000, c.gen, 12))
	}
	pcm, _ := fixture(8000)
	b := []byte{4, 1}
	for _, s := range pcm[:3000] {
		b = binary.LittleEndian.AppendUint16(b, uint16(s))
	}
	f.Add(b)
	f.Add([]byte{})
	f.Add([]byte{2})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		opts := Options{SampleRate: 8000 * (1 + int(data[0]&1))}
		switch data[0] >> 1 & 3 {
		case 1:
			opts.NormVariance = true
		case 2:
			opts.Norm = NormOff
		case 3:
			opts.NumCepstra, opts.NormWindow = 13, 5
		}
		e, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		chunk := (1 + int(data[1]%8)) * e.HopSize()
		data = data[2:]
		samples := make([]int16, len(data)/2)
		for i := range samples {
			samples[i] = int16(binary.LittleEndian.Uint16(data[2*i:]))
		}
		var out []float32
		total := 0
		for len(samples) >= e.HopSize() {
			n := min(chunk, len(samples)/e.HopSize()*e.HopSize())
			var got int
			out, got, err = e.Append(out, samples[:n], samples[0]&1 == 1)
			if err != nil {
				t.Fatal(err)
			}
			total += got
			samples = samples[n:]
		}
		if len(samples) > 0 {
			if _, _, err := e.Append(out, samples, true); err != ErrHopLength {
				t.Fatalf("partial hop: %v, want ErrHopLength", err)
			}
		}
		out, got := e.Flush(out)
		total += got
		if len(out) != total*e.Dim() {
			t.Fatalf("%d values for %d vectors of %d", len(out), total, e.Dim())
		}
		checkFinite(t, out)
		if opts.Norm == NormOff {
			return
		}
		if err := Normalize(out, e.Dim(), true); err != nil {
			t.Fatal(err)
		}
		checkFinite(t, out)
	})
}
