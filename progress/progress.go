// Package progress reports how far a long command-line run has got: a bar
// redrawn in place on a terminal, or a plain line every few seconds when
// the output is a log (CI, a file). earshot eval and earshot replay use
// it, so that long work always shows how far it is.
package progress

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Cadence: a terminal bar is redrawn four times a second; plain lines come
// every 5 s.
const (
	BarInterval  = 250 * time.Millisecond
	LineInterval = 5 * time.Second
	barWidth     = 24
)

// Status is a snapshot of a run.
type Status struct {
	Elapsed time.Duration
	// Fraction done, 0 to 1.
	Fraction float64
	// Detail is the run's own counters, e.g. "jobs 5/10  123 s of audio".
	Detail string
}

// Bar renders s as one line for a terminal:
// "[============            ]  50%  <detail>  00:10 ETA 00:10".
func Bar(s Status) string {
	f := clamp(s.Fraction)
	n := int(f * barWidth)
	return fmt.Sprintf("[%s%s] %3.0f%%  %s  %s ETA %s", strings.Repeat("=", n), strings.Repeat(" ", barWidth-n),
		100*f, s.Detail, Clock(s.Elapsed), ETA(s))
}

// Line renders s as a log line: "<name>: 00:10 elapsed, <detail>; 50% done, ETA 00:10".
func Line(name string, s Status) string {
	return fmt.Sprintf("%s: %s elapsed, %s; %.0f%% done, ETA %s", name, Clock(s.Elapsed), s.Detail, 100*clamp(s.Fraction), ETA(s))
}

// ETA estimates the time left from the fraction done: "--:--" before
// anything is done.
func ETA(s Status) string {
	f := clamp(s.Fraction)
	switch {
	case f >= 1:
		return Clock(0)
	case f <= 0:
		return "--:--"
	}
	return Clock(time.Duration(float64(s.Elapsed) * (1 - f) / f))
}

// Clock formats a duration as mm:ss, or h:mm:ss from an hour on.
func Clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}

func clamp(f float64) float64 { return max(0, min(f, 1)) }

// Start reports status to w until the returned stop is called: a bar
// redrawn every BarInterval when bar is true (a terminal), else a line
// named name every LineInterval. stop writes a final report and waits for
// the reporting goroutine. With w nil nothing is reported and stop does
// nothing. status is called from the reporting goroutine.
func Start(w io.Writer, bar bool, name string, status func() Status) (stop func()) {
	if w == nil {
		return func() {}
	}
	interval, render := LineInterval, func(s Status) string { return Line(name, s) + "\n" }
	if bar {
		interval, render = BarInterval, func(s Status) string { return "\r\x1b[K" + Bar(s) }
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				io.WriteString(w, render(status()))
			case <-quit:
				final := render(status())
				if bar {
					final += "\n"
				}
				io.WriteString(w, final)
				return
			}
		}
	}()
	return func() { close(quit); <-done }
}
