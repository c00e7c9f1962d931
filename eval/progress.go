package eval

import (
	"fmt"
	"time"

	"github.com/earshot-voice/earshot/progress"
)

// status is the run's progress: jobs done of all, and the audio processed.
func (r *runner) status(start time.Time) progress.Status {
	done, total := r.jobsDone.Load(), r.jobsTotal
	f := 1.0
	if total > 0 {
		f = float64(done) / float64(total)
	}
	return progress.Status{Elapsed: time.Since(start), Fraction: f,
		Detail: fmt.Sprintf("jobs %d/%d  %.0f s of audio", done, total, float64(r.audioMs.Load())/1000)}
}

// startProgress starts the reporter and returns the function that stops
// it, writes the final report and waits for it.
func (r *runner) startProgress(start time.Time) (stop func()) {
	return progress.Start(r.opts.Progress, r.opts.ProgressBar, "eval", func() progress.Status { return r.status(start) })
}
