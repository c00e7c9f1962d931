package voiceprint

import (
	"math/bits"
	"math/rand/v2"
	"testing"
)

// loopDirect is the definition loop implements: every lag, every frame,
// three comparisons.
func loopDirect(c *collector) (frac float64, lag int) {
	n := min(c.ringN, ringFrames)
	start := c.ringN - n
	fp := func(i int) uint32 { return c.ring[(start+i)%ringFrames] }
	near := func(a, b uint32) bool { return bits.OnesCount32(a^b) <= loopHamming }
	for l := loopMinLag; l+1 < n-loopMinOverlap; l++ {
		m := 0
		for i := l + 1; i < n-1; i++ {
			x := fp(i)
			if near(x, fp(i-l)) || near(x, fp(i-l-1)) || near(x, fp(i-l+1)) {
				m++
			}
		}
		if f := float64(m) / float64(n-l-2); f > frac {
			frac, lag = f, l
		}
	}
	return frac, lag
}

func TestLoopMatchesDirect(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	fill := func(c *collector, frames int, period int, flips int) {
		c.ringN = 0
		var loop []uint32
		for range frames {
			var f uint32
			if period > 0 && len(loop) == period {
				f = loop[c.ringN%period]
				for range flips {
					f ^= 1 << r.IntN(32)
				}
			} else {
				f = r.Uint32()
				if period > 0 {
					loop = append(loop, f)
				}
			}
			c.ring[c.ringN%ringFrames] = f
			c.ringN++
		}
	}
	tests := []struct {
		name                  string
		frames, period, flips int
	}{
		{"too short to look", 200, 0, 0},
		{"just long enough", loopMinLag + loopMinOverlap + 3, 0, 0},
		{"random speech", 1500, 0, 0},
		{"a full ring", ringFrames, 0, 0},
		{"the ring wrapped", 3 * ringFrames / 2, 0, 0},
		{"a clean loop", 1800, 400, 0},
		{"a noisy loop", ringFrames + 500, 333, 4},
		{"a loop at the shortest lag", 900, loopMinLag, 3},
		{"bits at word edges", 64*20 + 1, 63, 2},
	}
	for _, tt := range tests {
		var c collector
		fill(&c, tt.frames, tt.period, tt.flips)
		gotF, gotL := c.loop()
		wantF, wantL := loopDirect(&c)
		if gotF != wantF || gotL != wantL {
			t.Errorf("%s: loop() = %v at lag %d, want %v at lag %d", tt.name, gotF, gotL, wantF, wantL)
		}
		if tt.period >= loopMinLag && tt.frames > 2*tt.period+loopMinOverlap && gotF < 0.9 {
			t.Errorf("%s: a loop of %d frames found at only %v", tt.name, tt.period, gotF)
		}
	}
}

func BenchmarkLoop(b *testing.B) {
	var c collector
	r := rand.New(rand.NewPCG(1, 2))
	for i := range ringFrames {
		c.ring[i] = r.Uint32()
	}
	c.ringN = ringFrames
	for b.Loop() {
		c.loop()
	}
}
