package replay

import (
	"fmt"
	"time"

	"github.com/earshot-voice/earshot/progress"
)

// status is the run's progress: the share of the planned frames handled,
// and the calls, frames and errors so far.
func (r *Runner) status(start time.Time) progress.Status {
	st := r.stats
	s := progress.Status{Elapsed: time.Since(start), Detail: fmt.Sprintf(
		"calls %d/%d  active %d  done %d  frames %d  late %d  errors %d",
		st.started.Load(), r.opts.Calls, st.active.Load(), st.done.Load(), st.framesSent.Load(), st.framesLate.Load(),
		st.errorsTotal.Load())}
	if r.plannedFrames > 0 {
		s.Fraction = float64(st.progressFrames.Load()) / float64(r.plannedFrames)
	}
	return s
}

// startProgress starts the progress reporter and returns the function that
// stops it, writes the final report and waits for it.
func (r *Runner) startProgress(start time.Time) (stop func()) {
	return progress.Start(r.opts.Progress, r.opts.ProgressBar, "replay", func() progress.Status { return r.status(start) })
}
