package features

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestGolden runs the fixture utterance (see fixture) through an extractor
// with default options at 8 and 16 kHz and compares every value with
// testdata/<name>.golden, written by `go test -run Golden -update`.
// The tolerance absorbs floating-point differences between platforms
// (fused multiply-add on arm64, math.Cos in the tables); anything larger is
// a change of the features, which would invalidate trained models.
func TestGolden(t *testing.T) {
	cases := []struct {
		name string
		opts Options
	}{
		{"vowel8k", Options{}},
		{"vowel16k", Options{SampleRate: 16000}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := New(c.opts)
			if err != nil {
				t.Fatal(err)
			}
			rate := max(c.opts.SampleRate, 8000)
			pcm, voiced := fixture(rate)
			got := runAll(t, e, pcm, voiced, 1)
			path := filepath.Join("testdata", c.name+".golden")
			if *update {
				writeGolden(t, path, got, e.Dim(), c.name)
			}
			want := readGolden(t, path, e.Dim())
			if len(got) != len(want) {
				t.Fatalf("%d values, golden has %d", len(got), len(want))
			}
			for i := range got {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*(1+math.Abs(float64(want[i]))) {
					t.Fatalf("vector %d coefficient %d: %v, golden %v", i/e.Dim(), i%e.Dim(), got[i], want[i])
				}
			}
		})
	}
}

func writeGolden(t *testing.T, path string, v []float32, dim int, name string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: features of the synthetic fixture utterance (see fixture in signal_test.go),\n", name)
	fmt.Fprintf(&b, "# default options; one vector of %d values per line. Regenerate: go test -run Golden -update\n", dim)
	for i := 0; i < len(v); i += dim {
		for j, x := range v[i : i+dim] {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.FormatFloat(float64(x), 'g', 7, 32))
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readGolden(t *testing.T, path string, dim int) []float32 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var v []float32
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != dim {
			t.Fatalf("%s: line with %d values, want %d", path, len(fields), dim)
		}
		for _, s := range fields {
			x, err := strconv.ParseFloat(s, 32)
			if err != nil {
				t.Fatal(err)
			}
			v = append(v, float32(x))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return v
}
