package replay

import "time"

// schedule paces one call's frames against a monotonic clock: frame k is
// due at start + k·period, whenever the frames before it went out. A
// sender that falls behind catches up in a burst instead of drifting, as a
// real-time source must. A period of 0 means as fast as possible: every
// frame is due at once and none is ever late.
type schedule struct {
	start  time.Time // carries Go's monotonic clock reading
	period time.Duration
}

// newSchedule paces frames of frameDuration at speed times real time
// (speed 0: unpaced).
func newSchedule(start time.Time, frameDuration time.Duration, speed float64) schedule {
	s := schedule{start: start}
	if speed > 0 {
		s.period = time.Duration(float64(frameDuration) / speed)
	}
	return s
}

// due is when frame k should be sent.
func (s schedule) due(k int) time.Time {
	return s.start.Add(time.Duration(k) * s.period)
}

// lag is how far behind its due time frame k is when sent at now; 0 when
// on time or early.
func (s schedule) lag(k int, now time.Time) time.Duration {
	return max(now.Sub(s.due(k)), 0)
}

// late reports whether frame k, sent at now, is late: more than one frame
// period behind its due time. That is the sender failing to keep pace, a
// sign that the load generator, not the server, is the bottleneck (or
// that the server stopped reading and the socket's buffers filled).
func (s schedule) late(k int, now time.Time) bool {
	return s.period > 0 && s.lag(k, now) > s.period
}

// tick is the grid paced frames go out on. Every call's schedule starts
// on it and every wake-up is rounded up to it, so the calls whose frames
// fall due within one tick are woken together: at thousands of calls the
// generator wakes 200 times a second instead of once per frame, and the
// scheduler's wake-ups (system calls, expensive on virtual machines) stop
// taking CPU from the server under test. At real time, with frames of a
// whole number of ticks, no frame is sent later than it is due.
const tick = 5 * time.Millisecond

// onGrid returns the first instant at or after t of the grid of ticks
// that starts at epoch.
func onGrid(epoch, t time.Time) time.Time {
	d := t.Sub(epoch)
	if d <= 0 {
		return epoch
	}
	return epoch.Add((d + tick - 1) / tick * tick)
}

// ramp paces the starts of calls at rate per second: each start is due
// one interval after the previous one was due. A run that fell more than
// an interval behind (waiting for a free slot) starts again from now
// rather than catching up in a burst; lateness below an interval (timer
// wake-ups) does not accumulate. A rate of 0 starts calls at once.
type ramp struct {
	due      time.Time
	interval time.Duration
}

func newRamp(start time.Time, rate float64) ramp {
	r := ramp{due: start}
	if rate > 0 {
		r.interval = time.Duration(float64(time.Second) / rate)
	}
	return r
}

// wait returns how long to wait, from now, before the next start, and
// books that start.
func (r *ramp) wait(now time.Time) time.Duration {
	if r.interval == 0 {
		return 0
	}
	if r.due.Before(now.Add(-r.interval)) {
		r.due = now
	}
	d := r.due.Sub(now)
	r.due = r.due.Add(r.interval)
	return max(d, 0)
}
