package replay

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/earshot-voice/earshot/codec"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// tone is n samples of a sine of freq Hz at rate, amplitude amp.
func tone(n, rate int, freq, amp float64) []int16 {
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
	}
	return s
}

// rampSamples is n samples counting up from start in steps of step, so every
// sample of a leg is told apart after µ-law coding.
func rampSamples(n int, start, step int16) []int16 {
	s := make([]int16, n)
	for i := range s {
		s[i] = start + int16(i)*step
	}
	return s
}

// interleave2 interleaves two equal-length channels.
func interleave2(a, b []int16) []int16 {
	out := make([]int16, 0, 2*len(a))
	for i := range a {
		out = append(out, a[i], b[i])
	}
	return out
}

// writeWAV writes samples (interleaved) as a WAV file in dir and returns
// its path.
func writeWAV(t testing.TB, dir, name string, f codec.Format, samples []int16) string {
	t.Helper()
	var b bytes.Buffer
	if err := codec.WriteWAV(&b, f, samples); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, name, b.Bytes())
}

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// muLaw encodes samples.
func muLaw(s []int16) []byte { return codec.AppendMuLawEncode(nil, s) }
