package codec

import (
	"bytes"
	"io"
	"testing"
)

// reportRealtime reports how many seconds of audio one second of CPU
// processes, given the audio seconds one iteration handles.
func reportRealtime(b *testing.B, audioSeconds float64) {
	b.ReportMetric(audioSeconds*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
}

// testBytes returns n bytes of a fixed pseudo-random pattern.
func testBytes(n int) []byte {
	b := make([]byte, n)
	x := uint32(1)
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// BenchmarkAppendMuLaw decodes a 20 ms mono frame (160 bytes).
func BenchmarkAppendMuLaw(b *testing.B) {
	src := testBytes(160)
	dst := make([]int16, 0, len(src))
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		dst = AppendMuLaw(dst[:0], src)
	}
	reportRealtime(b, 0.020)
}

// BenchmarkAppendALaw decodes a 20 ms mono frame (160 bytes).
func BenchmarkAppendALaw(b *testing.B) {
	src := testBytes(160)
	dst := make([]int16, 0, len(src))
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		dst = AppendALaw(dst[:0], src)
	}
	reportRealtime(b, 0.020)
}

// BenchmarkAppendL16 decodes a 20 ms mono frame at 8 kHz (320 bytes).
func BenchmarkAppendL16(b *testing.B) {
	src := testBytes(320)
	dst := make([]int16, 0, len(src)/2)
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		dst, _ = AppendL16(dst[:0], src)
	}
	reportRealtime(b, 0.020)
}

// BenchmarkAppendMuLawEncode encodes a 20 ms mono frame (160 samples).
func BenchmarkAppendMuLawEncode(b *testing.B) {
	src, _ := AppendL16(nil, testBytes(320))
	dst := make([]byte, 0, len(src))
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendMuLawEncode(dst[:0], src)
	}
	reportRealtime(b, 0.020)
}

// BenchmarkAppendMuLawChannel extracts one leg of a 200 ms stereo PCMU
// frame (3200 bytes), the reference AudioHook client's frame size.
func BenchmarkAppendMuLawChannel(b *testing.B) {
	src := testBytes(3200)
	dst := make([]int16, 0, len(src)/2)
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		dst, _ = AppendMuLawChannel(dst[:0], src, 2, 0)
	}
	reportRealtime(b, 0.200)
}

// BenchmarkAppendChannel extracts one channel of 200 ms of 8 kHz stereo PCM.
func BenchmarkAppendChannel(b *testing.B) {
	src, _ := AppendL16(nil, testBytes(6400))
	dst := make([]int16, 0, len(src)/2)
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = AppendChannel(dst[:0], src, 2, 1)
	}
	reportRealtime(b, 0.200)
}

// BenchmarkDecimator decimates 200 ms of 16 kHz audio (3200 samples).
func BenchmarkDecimator(b *testing.B) {
	src, _ := AppendL16(nil, testBytes(6400))
	dst := make([]int16, 0, len(src)/2)
	var d Decimator
	b.ReportAllocs()
	for b.Loop() {
		dst = d.Append(dst[:0], src)
	}
	reportRealtime(b, 0.200)
}

// BenchmarkWAVReader parses and decodes a whole 10 s WAV file from memory,
// reading 200 ms at a time: header parsing and the reader's buffer count.
func BenchmarkWAVReader(b *testing.B) {
	tests := []struct {
		name string
		f    Format
	}{
		{"mulaw_8k_stereo", Format{Encoding: MuLaw, SampleRate: 8000, Channels: 2}},
		{"pcm16_16k_mono", Format{Encoding: L16, SampleRate: 16000, Channels: 1}},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			const seconds = 10
			samples, _ := AppendL16(nil, testBytes(2*seconds*tt.f.SampleRate*tt.f.Channels))
			var file bytes.Buffer
			if err := WriteWAV(&file, tt.f, samples); err != nil {
				b.Fatal(err)
			}
			data := file.Bytes()
			buf := make([]int16, tt.f.SampleRate*tt.f.Channels/5)
			src := bytes.NewReader(data)
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				src.Reset(data)
				r, err := NewWAVReader(src)
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, err := r.Read(buf); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
			}
			reportRealtime(b, seconds)
		})
	}
}
