package codec

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the Go-generated files in testdata/ (see testdata/README.md)")

// readS16 reads a headerless little-endian 16-bit file from testdata.
func readS16(t testing.TB, name string) []int16 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := AppendL16(nil, b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// writeGolden writes a generated file into testdata when -update is set.
func writeGolden(t *testing.T, name string, data []byte) {
	t.Helper()
	if !*update {
		return
	}
	if err := os.WriteFile(filepath.Join("testdata", name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// extensibleFixture builds testdata/extensible_pcm16_8k_stereo.wav: 125 ms
// of PCM16 8 kHz stereo (500 Hz left, 1250 Hz right) in a
// WAVE_FORMAT_EXTENSIBLE fmt chunk, with a LIST/INFO chunk before the data
// as ffmpeg writes one.
func extensibleFixture() []byte {
	samples := make([]int16, 0, 2000)
	for i := range 1000 {
		x := float64(i) / 8000
		samples = append(samples,
			int16(math.Round(12000*math.Sin(2*math.Pi*500*x))),
			int16(math.Round(6000*math.Sin(2*math.Pi*1250*x))))
	}
	info := append([]byte("INFO"), chunk("ISFT", []byte("earshot codec test\x00"))...)
	return riff("WAVE",
		chunk("fmt ", extBody(wavTagPCM, 2, 8000, 16, 16)),
		chunk("LIST", info),
		chunk("data", le16(samples...)))
}

// TestGoldenWAVs reads every WAV fixture and compares its samples with the
// decoding SoX made of it (the .s16 files).
func TestGoldenWAVs(t *testing.T) {
	writeGolden(t, "extensible_pcm16_8k_stereo.wav", extensibleFixture())
	tests := []struct {
		file   string
		format Format
	}{
		{"mulaw_8k_stereo.wav", Format{MuLaw, 8000, 2, 1000}},
		{"alaw_8k_mono.wav", Format{ALaw, 8000, 1, 1000}},
		{"pcm16_16k_mono.wav", Format{L16, 16000, 1, 2000}},
		{"pcm16_8k_mono_pipe.wav", Format{L16, 8000, 1, -1}},
		{"extensible_pcm16_8k_stereo.wav", Format{L16, 8000, 2, 1000}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			r, err := NewWAVReader(f)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Format(); got != tt.format {
				t.Errorf("format %+v, want %+v", got, tt.format)
			}
			got, err := readAll(r, 160)
			if err != nil {
				t.Fatal(err)
			}
			want := readS16(t, tt.file[:len(tt.file)-len(".wav")]+".s16")
			if !slices.Equal(got, want) {
				t.Errorf("%d samples differ from SoX's %d", len(got), len(want))
			}
		})
	}
}

// TestGoldenWriteWAV writes the samples SoX decoded from its own WAV files
// and expects SoX's files back, byte for byte: the same header layout (fmt
// with cbSize and a fact chunk for G.711), and G.711 codes that survive a
// decode-encode round trip.
func TestGoldenWriteWAV(t *testing.T) {
	tests := []struct {
		file   string
		format Format
	}{
		{"mulaw_8k_stereo", Format{Encoding: MuLaw, SampleRate: 8000, Channels: 2}},
		{"alaw_8k_mono", Format{Encoding: ALaw, SampleRate: 8000, Channels: 1}},
		{"pcm16_16k_mono", Format{Encoding: L16, SampleRate: 16000, Channels: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteWAV(&buf, tt.format, readS16(t, tt.file+".s16")); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join("testdata", tt.file+".wav"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("WriteWAV output (%d bytes) differs from SoX's file (%d bytes)", buf.Len(), len(want))
			}
		})
	}
}

// TestGoldenDecimator checks the decimation of the 16 kHz sweep fixture.
func TestGoldenDecimator(t *testing.T) {
	in := readS16(t, "pcm16_16k_mono.s16")
	var d Decimator
	got := d.Append(nil, in)
	writeGolden(t, "pcm16_16k_mono.decimated.s16", AppendL16Encode(nil, got))
	if want := readS16(t, "pcm16_16k_mono.decimated.s16"); !slices.Equal(got, want) {
		t.Errorf("decimated sweep (%d samples) differs from the golden file (%d samples)", len(got), len(want))
	}
}
