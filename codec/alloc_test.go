package codec

import (
	"bytes"
	"testing"
)

// endless is an io.Reader of endless µ-law silence.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 0xFF
	}
	return len(p), nil
}

// TestZeroAllocs proves that the per-frame functions allocate nothing once
// dst has capacity: a 200 ms stereo AudioHook frame and its 8 kHz and
// 16 kHz relatives.
func TestZeroAllocs(t *testing.T) {
	stereo := make([]byte, 3200) // 200 ms of PCMU stereo
	for i := range stereo {
		stereo[i] = byte(i)
	}
	pcm := make([]int16, 1600)
	pcmBytes := AppendL16Encode(nil, pcm)
	samples := make([]int16, 0, 3200)
	coded := make([]byte, 0, 6400)
	var d Decimator
	header := riff("WAVE", fmtChunk(wavTagMuLaw, 2, 8000, 8), sizedChunk("data", 0, nil))
	wr, err := NewWAVReader(bytes.NewReader(append(header, make([]byte, 1<<20)...)))
	if err != nil {
		t.Fatal(err)
	}
	wr.r = endless{}
	wavBuf := make([]int16, 1600)

	tests := []struct {
		name string
		fn   func()
	}{
		{"AppendMuLaw", func() { samples = AppendMuLaw(samples[:0], stereo) }},
		{"AppendALaw", func() { samples = AppendALaw(samples[:0], stereo) }},
		{"AppendL16", func() { samples, _ = AppendL16(samples[:0], pcmBytes) }},
		{"AppendMuLawEncode", func() { coded = AppendMuLawEncode(coded[:0], pcm) }},
		{"AppendALawEncode", func() { coded = AppendALawEncode(coded[:0], pcm) }},
		{"AppendL16Encode", func() { coded = AppendL16Encode(coded[:0], pcm) }},
		{"AppendChannel", func() { samples, _ = AppendChannel(samples[:0], pcm, 2, 1) }},
		{"AppendMuLawChannel", func() { samples, _ = AppendMuLawChannel(samples[:0], stereo, 2, 0) }},
		{"AppendALawChannel", func() { samples, _ = AppendALawChannel(samples[:0], stereo, 2, 1) }},
		{"AppendL16Channel", func() { samples, _ = AppendL16Channel(samples[:0], pcmBytes, 2, 1) }},
		{"AppendDecode", func() { samples, _ = AppendDecode(MuLaw, samples[:0], stereo) }},
		{"AppendDecodeChannel", func() { samples, _ = AppendDecodeChannel(MuLaw, samples[:0], stereo, 2, 1) }},
		{"Decimator.Append", func() { samples = d.Append(samples[:0], pcm) }},
		{"WAVReader.Read", func() { _, _ = wr.Read(wavBuf) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(100, tt.fn); n != 0 {
				t.Errorf("%v allocations per call, want 0", n)
			}
		})
	}
}
