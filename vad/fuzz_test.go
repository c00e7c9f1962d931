package vad

import (
	"encoding/binary"
	"testing"
)

// FuzzDetector feeds arbitrary little-endian 16-bit samples (and, when the
// first byte is odd, the same bytes reversed as a reference) to detectors
// at both rates. Nothing may panic, and the counters must stay consistent.
func FuzzDetector(f *testing.F) {
	seed := func(pcm []int16) []byte {
		b := make([]byte, 2*len(pcm))
		for i, v := range pcm {
			binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
		}
		return b
	}
	voice, _ := burstSignal(1, 8000, 0.6, -50, -25, [][2]float64{{0.1, 0.5}})
	f.Add(seed(voice))
	f.Add(seed(toPCM(tone(2000, 8000, 1000, -3))))
	f.Add(seed(make([]int16, 800)))
	full := make([]int16, 1600)
	for i := range full {
		full[i] = 32767
		if i%2 == 1 {
			full[i] = -32768
		}
	}
	f.Add(seed(full))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		pcm := make([]int16, len(b)/2)
		for i := range pcm {
			pcm[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
		}
		ref := make([]int16, len(pcm))
		for i := range ref {
			ref[i] = pcm[len(pcm)-1-i]
		}
		withRef := len(b) > 0 && b[0]&1 == 1
		for _, rate := range []int{8000, 16000} {
			d, err := New(Options{SampleRate: rate})
			if err != nil {
				t.Fatal(err)
			}
			fs := d.FrameSize()
			n := 0
			for i := 0; i+fs <= len(pcm); i += fs {
				if withRef {
					_, err = d.ProcessWithReference(pcm[i:i+fs], ref[i:i+fs])
				} else {
					_, err = d.Process(pcm[i : i+fs])
				}
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if p := d.VoicedPercentage(); p < 0 || p > 100 {
				t.Fatalf("VoicedPercentage %v", p)
			}
			if want := max(n-d.Delay(), 0); d.Frames() != want {
				t.Fatalf("Frames %d after %d frames, want %d", d.Frames(), n, want)
			}
			out := d.Flush(nil)
			if d.Frames() != n || len(out) != min(n, d.Delay()) || d.Voiced() > d.Frames() {
				t.Fatalf("after Flush: Frames %d Voiced %d, %d flushed, %d processed", d.Frames(), d.Voiced(), len(out), n)
			}
			if p := d.VoicedPercentage(); p < 0 || p > 100 {
				t.Fatalf("VoicedPercentage %v", p)
			}
		}
	})
}
