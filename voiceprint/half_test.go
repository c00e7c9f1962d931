package voiceprint

import (
	"math"
	"testing"
)

var halfCases = []struct {
	name string
	in   float32
	want uint16
}{
	{"zero", 0, 0x0000},
	{"negative zero", float32(math.Copysign(0, -1)), 0x8000},
	{"one", 1, 0x3c00},
	{"minus two", -2, 0xc000},
	{"one third", 1.0 / 3, 0x3555},
	{"largest", 65504, 0x7bff},
	{"saturates", 1e9, 0x7bff},
	{"saturates negative", -1e9, 0xfbff},
	{"smallest normal", 6.103515625e-05, 0x0400},
	{"subnormal", 5.960464477539063e-08, 0x0001},
	{"underflow", 1e-10, 0x0000},
	{"ties to even", 1 + 1.0/2048, 0x3c00},
	{"NaN", float32(math.NaN()), 0x0000},
}

func TestHalf(t *testing.T) {
	for _, tc := range halfCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := toHalf(tc.in); got != tc.want {
				t.Errorf("toHalf(%g) = %#04x, want %#04x", tc.in, got, tc.want)
			}
			if !math.IsNaN(float64(tc.in)) && math.Abs(float64(tc.in)) <= 65504 {
				back := fromHalf(tc.want)
				if d := math.Abs(float64(back - tc.in)); d > math.Abs(float64(tc.in))/1024+6e-8 {
					t.Errorf("fromHalf(%#04x) = %g, want about %g", tc.want, back, tc.in)
				}
			}
		})
	}
}

func FuzzHalf(f *testing.F) {
	for _, tc := range halfCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, x float32) {
		h := toHalf(x)
		if h&0x7c00 == 0x7c00 {
			t.Fatalf("toHalf(%g) = %#04x: infinity or NaN", x, h)
		}
		if math.IsNaN(float64(x)) || math.Abs(float64(x)) > 65504 {
			return
		}
		back := fromHalf(h)
		if d := math.Abs(float64(back - x)); d > math.Abs(float64(x))/2048+3e-8 {
			t.Fatalf("round trip of %g gave %g", x, back)
		}
		if toHalf(back) != h {
			t.Fatalf("toHalf(fromHalf(%#04x)) = %#04x", h, toHalf(back))
		}
	})
}
