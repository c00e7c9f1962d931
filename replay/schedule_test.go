package replay

import (
	"testing"
	"time"
)

// TestSchedule checks the pacing and the lateness accounting: frame k is
// due at start + k·period whatever happened before (no drift), and is
// late only when sent more than one period behind that.
func TestSchedule(t *testing.T) {
	start := time.Now()
	ms := time.Millisecond
	tests := []struct {
		name     string
		frame    time.Duration
		speed    float64
		k        int
		sentAt   time.Duration // after start
		wantDue  time.Duration // after start
		wantLag  time.Duration
		wantLate bool
	}{
		{"real time, first frame on time", 200 * ms, 1, 0, 0, 0, 0, false},
		{"real time, early", 200 * ms, 1, 5, 900 * ms, 1000 * ms, 0, false},
		{"real time, on time", 200 * ms, 1, 5, 1000 * ms, 1000 * ms, 0, false},
		{"real time, a little behind", 200 * ms, 1, 5, 1150 * ms, 1000 * ms, 150 * ms, false},
		{"real time, exactly one period behind", 200 * ms, 1, 5, 1200 * ms, 1000 * ms, 200 * ms, false},
		{"real time, more than a period behind", 200 * ms, 1, 5, 1201 * ms, 1000 * ms, 201 * ms, true},
		{"real time, far into a call", 200 * ms, 1, 9000, 1800*time.Second + 50*ms, 1800 * time.Second, 50 * ms, false},
		{"twice real time", 200 * ms, 2, 10, 1000 * ms, 1000 * ms, 0, false},
		{"twice real time, late after 100 ms", 200 * ms, 2, 10, 1101 * ms, 1000 * ms, 101 * ms, true},
		{"20 ms frames", 20 * ms, 1, 50, 1021 * ms, 1000 * ms, 21 * ms, true},
		{"as fast as possible: all due at once, never late", 200 * ms, 0, 100, 5 * time.Second, 0, 5 * time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSchedule(start, tt.frame, tt.speed)
			now := start.Add(tt.sentAt)
			if got := s.due(tt.k).Sub(start); got != tt.wantDue {
				t.Errorf("due %v, want %v", got, tt.wantDue)
			}
			if got := s.lag(tt.k, now); got != tt.wantLag {
				t.Errorf("lag %v, want %v", got, tt.wantLag)
			}
			if got := s.late(tt.k, now); got != tt.wantLate {
				t.Errorf("late %v, want %v", got, tt.wantLate)
			}
		})
	}
}

// TestScheduleCatchUp: a sender that stalls for a second sends the frames
// it owes in a burst; only those more than a period behind are late, and
// the schedule after the stall is unchanged.
func TestScheduleCatchUp(t *testing.T) {
	start := time.Now()
	s := newSchedule(start, 200*time.Millisecond, 1)
	stall := start.Add(1100 * time.Millisecond) // frames 0 and 1 went out on time; then a stall
	var late []int
	for k := 2; k <= 6; k++ {
		if s.late(k, stall) {
			late = append(late, k)
		}
	}
	// Due: 400, 600, 800, 1000, 1200 ms; sent at 1100 ms: lags 700, 500,
	// 300, 100, 0 ms.
	if len(late) != 3 || late[0] != 2 || late[2] != 4 {
		t.Errorf("late frames %v, want [2 3 4]", late)
	}
	if got := s.due(7).Sub(start); got != 1400*time.Millisecond {
		t.Errorf("frame 7 due at %v after the stall, want 1.4s", got)
	}
}

// TestOnGrid rounds wake-ups up to the pacing grid, never down, so that a
// frame is never sent before it is due.
func TestOnGrid(t *testing.T) {
	epoch := time.Now()
	us := time.Microsecond
	tests := []struct {
		at, want time.Duration // after epoch
	}{
		{-time.Second, 0},
		{0, 0},
		{1 * us, tick},
		{tick - us, tick},
		{tick, tick},
		{tick + us, 2 * tick},
		{200 * time.Millisecond, 200 * time.Millisecond},
		{3*time.Hour + 7*us, 3*time.Hour + tick},
	}
	for _, tt := range tests {
		if got := onGrid(epoch, epoch.Add(tt.at)).Sub(epoch); got != tt.want {
			t.Errorf("onGrid(%v) = %v, want %v", tt.at, got, tt.want)
		}
	}
}

// TestRamp paces call starts: on schedule, without drift from late
// wake-ups, and without a burst after waiting for a free slot.
func TestRamp(t *testing.T) {
	start := time.Now()
	ms := time.Millisecond
	tests := []struct {
		name  string
		rate  float64
		calls []time.Duration // when each start is asked for, after start
		want  []time.Duration // the wait returned for each
	}{
		{"no rate: all at once", 0, []time.Duration{0, 0, 0}, []time.Duration{0, 0, 0}},
		{"10 per second, asked at once", 10, []time.Duration{0, 0, 0}, []time.Duration{0, 100 * ms, 200 * ms}},
		{"woken up late: no drift", 10, []time.Duration{0, 105 * ms, 203 * ms}, []time.Duration{0, 0, 0}},
		{"woken early", 10, []time.Duration{0, 90 * ms}, []time.Duration{0, 10 * ms}},
		{"slot freed late: no burst", 10, []time.Duration{0, 1000 * ms, 1000 * ms, 1000 * ms}, []time.Duration{0, 0, 100 * ms, 200 * ms}},
		{"less than an interval behind: kept", 10, []time.Duration{0, 150 * ms, 150 * ms}, []time.Duration{0, 0, 50 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRamp(start, tt.rate)
			for i, at := range tt.calls {
				if got := r.wait(start.Add(at)); got != tt.want[i] {
					t.Errorf("start %d asked at %v: wait %v, want %v", i, at, got, tt.want[i])
				}
			}
		})
	}
}

// TestRegisters spreads a share of the calls evenly over the run.
func TestRegisters(t *testing.T) {
	tests := []struct {
		share float64
		calls int
		want  string // one character per call: R registers
	}{
		{1, 5, "RRRRR"},
		{0.2, 10, "....R....R"},
		{0.5, 6, ".R.R.R"},
		{0.3, 10, "...R..R..R"},
	}
	for _, tt := range tests {
		var got []byte
		for i := range tt.calls {
			if registers(i, tt.share) {
				got = append(got, 'R')
			} else {
				got = append(got, '.')
			}
		}
		if string(got) != tt.want {
			t.Errorf("share %v: %s, want %s", tt.share, got, tt.want)
		}
	}
}
