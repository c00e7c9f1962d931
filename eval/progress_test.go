package eval

import (
	"strings"
	"testing"
	"time"
)

func TestProgressStatus(t *testing.T) {
	r := &runner{jobsTotal: 10}
	r.jobsDone.Store(5)
	r.audioMs.Store(123400)
	s := r.status(time.Now())
	if s.Fraction != 0.5 || s.Detail != "jobs 5/10  123 s of audio" {
		t.Errorf("status %+v", s)
	}
	if s := (&runner{}).status(time.Now()); s.Fraction != 1 {
		t.Errorf("a run without jobs is done: %+v", s)
	}
}

func TestStartProgressBar(t *testing.T) {
	var b strings.Builder
	r := &runner{opts: Options{Progress: &b, ProgressBar: true}, jobsTotal: 2}
	r.jobsDone.Store(2)
	r.startProgress(time.Now())()
	if got := b.String(); !strings.HasPrefix(got, "\r\x1b[K[====") || !strings.Contains(got, "jobs 2/2") || !strings.HasSuffix(got, "\n") {
		t.Errorf("final bar %q: want a redraw ending the line", got)
	}
	(&runner{}).startProgress(time.Now())() // no output: nothing to stop
}
