package voiceprint

import (
	"math/bits"
	"math/rand/v2"
	"testing"
)

// nearDefinition is what nearWords and nearGo compute, one bit at a time.
func nearDefinition(dst []uint64, a, b []uint32) {
	for w := range dst {
		dst[w] = 0
		for j := range 64 {
			if bits.OnesCount32(a[64*w+j]^b[64*w+j]) <= loopHamming {
				dst[w] |= 1 << j
			}
		}
	}
}

// flips returns x with k distinct random bits flipped.
func flips(rng *rand.Rand, x uint32, k int) uint32 {
	for _, b := range rng.Perm(32)[:k] {
		x ^= 1 << b
	}
	return x
}

func TestNearWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tests := []struct {
		name  string
		words int
		diff  func(i int) int // bits that differ between a[i] and b[i]
	}{
		{"empty", 0, func(int) int { return 0 }},
		{"identical", 1, func(int) int { return 0 }},
		{"all bits differ", 2, func(int) int { return 32 }},
		{"at the threshold", 3, func(int) int { return loopHamming }},
		{"just past it", 3, func(int) int { return loopHamming + 1 }},
		{"every distance", 5, func(i int) int { return i % 33 }},
		{"random around the threshold", 32, func(int) int { return loopHamming - 2 + rng.IntN(5) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := 64 * tc.words
			a, b := make([]uint32, n+7), make([]uint32, n+7)
			for i := range a {
				a[i] = rng.Uint32()
				b[i] = flips(rng, a[i], tc.diff(i))
			}
			want := make([]uint64, tc.words)
			nearDefinition(want, a, b)
			for _, impl := range []struct {
				name string
				f    func(dst []uint64, a, b []uint32)
			}{{"nearWords", nearWords}, {"nearGo", nearGo}} {
				got := make([]uint64, tc.words+1)
				got[tc.words] = 0xdead // past the end: must stay
				impl.f(got[:tc.words], a, b)
				for w := range want {
					if got[w] != want[w] {
						t.Errorf("%s: word %d = %064b, want %064b", impl.name, w, got[w], want[w])
					}
				}
				if got[tc.words] != 0xdead {
					t.Errorf("%s wrote past len(dst)", impl.name)
				}
			}
		})
	}
}

// TestLoopPortable runs the loop detector on the portable comparisons
// too, where the machine has AVX2.
func TestLoopPortable(t *testing.T) {
	if !hasAVX2 {
		t.Skip("the portable comparisons are the only ones here; TestLoopMatchesDirect covers them")
	}
	hasAVX2 = false
	defer func() { hasAVX2 = true }()
	TestLoopMatchesDirect(t)
}

func FuzzNearWords(f *testing.F) {
	f.Add(uint64(1), uint8(9))
	f.Add(uint64(2), uint8(0))
	f.Fuzz(func(t *testing.T, seed uint64, k uint8) {
		rng := rand.New(rand.NewPCG(seed, 0))
		const words = 2
		a, b := make([]uint32, 64*words), make([]uint32, 64*words)
		for i := range a {
			a[i] = rng.Uint32()
			b[i] = flips(rng, a[i], (int(k)+i)%33)
		}
		want, got, gotGo := make([]uint64, words), make([]uint64, words), make([]uint64, words)
		nearDefinition(want, a, b)
		nearWords(got, a, b)
		nearGo(gotGo, a, b)
		for w := range want {
			if got[w] != want[w] || gotGo[w] != want[w] {
				t.Fatalf("word %d: nearWords %064b, nearGo %064b, want %064b", w, got[w], gotGo[w], want[w])
			}
		}
	})
}

func BenchmarkNearWords(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	x, y := make([]uint32, ringFrames), make([]uint32, ringFrames)
	for i := range x {
		x[i], y[i] = rng.Uint32(), rng.Uint32()
	}
	dst := make([]uint64, ringFrames/64)
	for _, impl := range []struct {
		name string
		f    func(dst []uint64, a, b []uint32)
	}{{"nearWords", nearWords}, {"nearGo", nearGo}} {
		b.Run(impl.name, func(b *testing.B) {
			for b.Loop() {
				impl.f(dst, x, y)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*ringFrames), "ns/comparison")
		})
	}
}
