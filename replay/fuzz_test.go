package replay

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// FuzzParseSample reads whatever a server answers on its metrics endpoint.
func FuzzParseSample(f *testing.F) {
	f.Add([]byte("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1.5\nprocess_resident_memory_bytes 1e6\n" +
		"earshot_audiohook_streams_active 3\nearshot_frames_dropped_total{reason=\"queue_full\"} 2\n"))
	f.Add([]byte("process_cpu_seconds_total NaN\n"))
	f.Add([]byte("process_cpu_seconds_total{a=\"\\\"\"} +Inf 123\n"))
	f.Add([]byte("<html>not metrics</html>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseSample(bytes.NewReader(data))
		if err == nil && !strings.Contains(string(data), metricCPU) {
			t.Fatalf("a sample without %s: %+v", metricCPU, s)
		}
	})
}

// wavHeader is a PCM WAV header of rate, channels and dataBytes.
func wavHeader(rate, channels, bits int, dataBytes uint32) []byte {
	var b bytes.Buffer
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, 36+dataBytes)
	b.WriteString("WAVEfmt ")
	binary.Write(&b, binary.LittleEndian, uint32(16))
	binary.Write(&b, binary.LittleEndian, uint16(1))
	binary.Write(&b, binary.LittleEndian, uint16(channels))
	binary.Write(&b, binary.LittleEndian, uint32(rate))
	binary.Write(&b, binary.LittleEndian, uint32(rate*channels*bits/8))
	binary.Write(&b, binary.LittleEndian, uint16(channels*bits/8))
	binary.Write(&b, binary.LittleEndian, uint16(bits))
	b.WriteString("data")
	binary.Write(&b, binary.LittleEndian, dataBytes)
	return b.Bytes()
}

// FuzzReadRecording reads the files a replay is given: WAV and raw µ-law.
// What it accepts is whole: both legs as long as the recording.
func FuzzReadRecording(f *testing.F) {
	f.Add(append(wavHeader(8000, 1, 16, 3200), make([]byte, 3200)...), uint8(1))
	f.Add(append(wavHeader(16000, 2, 16, 6400), make([]byte, 6400)...), uint8(2))
	f.Add(append(wavHeader(8000, 2, 16, 1<<30), make([]byte, 10)...), uint8(2))
	f.Add(bytes.Repeat([]byte{0xff, 0x7f}, 800), uint8(2))
	f.Add([]byte{}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, channels uint8) {
		check := func(kind string, rec *Recording, err error) {
			if err != nil {
				return
			}
			if rec.Samples <= 0 || rec.Channels != 1 && rec.Channels != 2 || len(rec.legs[0]) != rec.Samples ||
				rec.Channels == 2 && len(rec.legs[1]) != rec.Samples {
				t.Fatalf("%s: accepted recording of %d samples, %d channels, legs %d and %d",
					kind, rec.Samples, rec.Channels, len(rec.legs[0]), len(rec.legs[1]))
			}
			for l := range numLayouts {
				rec.Payload(l)
			}
		}
		rec, err := ReadWAVRecording("fuzz.wav", bytes.NewReader(data))
		check("wav", rec, err)
		rec, err = ReadRawRecording("fuzz.raw", bytes.NewReader(data), int(channels%3))
		check("raw", rec, err)
	})
}
