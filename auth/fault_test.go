package auth

import (
	"testing"
	"time"
)

// A clock that jumps: backwards, the limiter refuses a key that has
// failures for one interval at most, not for the length of the jump;
// forwards, it forgives as the time passed says.
func TestLimiterClockJumps(t *testing.T) {
	tests := []struct {
		name     string
		failures int
		jump     time.Duration
		maxWait  time.Duration
	}{
		{"back an hour after one failure", 1, -time.Hour, 10 * time.Second},
		{"back an hour after the burst", 3, -time.Hour, 10 * time.Second},
		{"back a second after the burst", 3, -time.Second, 10 * time.Second},
		{"forward an hour after the burst", 3, time.Hour, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			l := NewLimiter(LimiterOptions{Burst: 3, Interval: 10 * time.Second, Now: c.Now})
			for range tt.failures {
				l.Fail("k")
			}
			c.Advance(tt.jump)
			if w := l.Wait("k"); w > tt.maxWait {
				t.Fatalf("Wait = %v after the jump, want at most %v", w, tt.maxWait)
			}
			// The key then fails and recovers as usual.
			for range 3 {
				l.Fail("k")
			}
			if w := l.Wait("k"); w <= 0 || w > 10*time.Second {
				t.Fatalf("after the burst Wait = %v, want (0, 10s]", w)
			}
			c.Advance(10 * time.Second)
			if w := l.Wait("k"); w != 0 {
				t.Fatalf("one interval later Wait = %v", w)
			}
		})
	}
}
