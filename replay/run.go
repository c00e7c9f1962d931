package replay

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Runner replays calls. Make one with New; Run it once.
type Runner struct {
	opts   resolved
	recs   []*Recording
	stats  *stats
	timing timing
	epoch  time.Time // when Run began: the origin of the pacing grid

	dialHTTP *http.Client // upgrades: HTTP/1.1, no connection reuse
	rest     *restClient  // nil without Register
	model    string

	limit         int   // samples per channel a call streams at most (0: all)
	plannedFrames int64 // frames of every call together, for the progress report
}

// New checks the options and loads every file once (see LoadRecording).
func New(opts Options) (*Runner, error) {
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	r := &Runner{opts: o, stats: newStats(), timing: defaultTiming}
	seen := map[string]*Recording{}
	for _, f := range o.Files {
		if rec := seen[f]; rec != nil {
			r.recs = append(r.recs, rec)
			continue
		}
		rec, err := LoadRecording(f, o.Channels)
		if err != nil {
			return nil, err
		}
		seen[f] = rec
		r.recs = append(r.recs, rec)
	}
	if o.Duration > 0 {
		r.limit = max(int(o.Duration*sampleRate/time.Second), 1)
	}
	for i := range o.Calls {
		r.plannedFrames += int64(r.frames(r.recs[i%len(r.recs)], LayoutExternal).count())
	}
	dt := http.DefaultTransport.(*http.Transport).Clone()
	dt.ForceAttemptHTTP2 = false
	dt.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{} // the upgrade needs HTTP/1.1
	dt.MaxIdleConnsPerHost = -1                                              // upgraded connections are never reused
	r.dialHTTP = &http.Client{Transport: dt}
	if o.Register {
		hc := o.HTTPClient
		if hc == nil {
			rt := http.DefaultTransport.(*http.Transport).Clone()
			rt.MaxIdleConns = o.Concurrency + 16
			rt.MaxIdleConnsPerHost = o.Concurrency + 16
			hc = &http.Client{Transport: rt, Timeout: 30 * time.Second}
		}
		r.rest = &restClient{base: o.apiURL, key: o.APIKey, http: hc}
	}
	return r, nil
}

// frames cuts a recording's payload in layout l into the run's frames.
func (r *Runner) frames(rec *Recording, l Layout) framing {
	return newFraming(rec.Payload(l), l.Channels(), r.opts.FrameDuration, r.limit)
}

// Run loads the files and replays the calls: New, then Runner.Run.
func Run(ctx context.Context, opts Options) (*Summary, error) {
	r, err := New(opts)
	if err != nil {
		return nil, err
	}
	return r.Run(ctx)
}

// Recordings returns the loaded files, in the order of Options.Files.
func (r *Runner) Recordings() []*Recording { return r.recs }

// Run makes the calls: at most Concurrency at a time, starting at most
// Rate per second, each on its own goroutine, and returns when every call
// has ended. Cancelling ctx starts no more calls and ends the live ones
// (close "end", closed; sockets still open 15 s later are dropped). The
// error is about the run as a whole (with Register, the model list could
// not be read); what happened to the calls is in the Summary.
func (r *Runner) Run(ctx context.Context) (*Summary, error) {
	start, before := time.Now(), processUsage()
	r.epoch = start
	var watch *serverWatch
	if r.opts.ServerMetrics != "" {
		var err error
		if watch, err = startServerWatch(ctx, r.opts.ServerMetrics, r.stats.active.Load); err != nil {
			return nil, err
		}
	}
	if r.rest != nil {
		r.model = r.opts.ModelHash
		if r.model == "" {
			m, err := r.rest.model(ctx)
			if err != nil {
				return nil, fmt.Errorf("replay: with --register, the model hash: %w", err)
			}
			r.model = m
		}
	}

	stopProgress := r.startProgress(start)
	sem := make(chan struct{}, r.opts.Concurrency)
	var wg sync.WaitGroup
	timer := time.NewTimer(0)
	<-timer.C
	defer timer.Stop()
	rmp := newRamp(start, r.opts.Rate)
calls:
	for i := range r.opts.Calls {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			break calls
		}
		if d := rmp.wait(time.Now()); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				<-sem
				break calls
			}
		}
		if ctx.Err() != nil {
			<-sem
			break
		}
		r.stats.started.Add(1)
		r.stats.active.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c := newCall(r, i)
			o := c.run(ctx)
			r.stats.end(o)
			r.stats.active.Add(-1)
			r.stats.done.Add(1)
		}()
	}
	wg.Wait()
	stopProgress()
	s := r.summary(start, time.Since(start))
	if after := processUsage(); after.ok {
		g := &Generator{UserSeconds: (after.user - before.user).Seconds(), SystemSeconds: (after.system - before.system).Seconds(),
			MaxRSSMiB: float64(after.maxRSS) / (1 << 20)}
		if s.Frames.AudioSeconds > 0 {
			g.MSPerCallSecond = 1000 * (g.UserSeconds + g.SystemSeconds) / s.Frames.AudioSeconds
		}
		s.Generator = g
	}
	if watch != nil {
		s.Server = watch.finish(ctx, s.Frames.AudioSeconds)
	}
	return s, nil
}

// summary builds the Summary from the counters.
func (r *Runner) summary(start time.Time, elapsed time.Duration) *Summary {
	st := r.stats
	s := &Summary{StartedAt: start.UTC(), ElapsedSeconds: elapsed.Seconds(), URL: r.opts.url}
	var audio time.Duration
	var bytes int
	seen := map[*Recording]bool{}
	for _, rec := range r.recs {
		if !seen[rec] {
			seen[rec] = true
			audio += rec.Duration()
			bytes += rec.Bytes()
		}
	}
	s.Settings = Settings{Calls: r.opts.Calls, Concurrency: r.opts.Concurrency, Rate: r.opts.Rate, Speed: r.opts.Speed,
		FrameMS: ms(r.opts.FrameDuration), DurationCapS: r.opts.Duration.Seconds(), Register: r.opts.Register,
		Signed: r.opts.secret != nil, Files: r.opts.Files, AudioSeconds: audio.Seconds(), RecordingsMiB: float64(bytes) / (1 << 20)}
	if r.opts.Register {
		s.Settings.RegisterShare = r.opts.RegisterShare
	}
	s.Calls = CallCounts{Total: st.started.Load(), Completed: st.completed.Load(), Disconnected: st.disconnected.Load(),
		Failed: st.failed.Load(), Cancelled: st.cancelled.Load(), FailedByKind: st.copyMap(st.failedKinds),
		DisconnectReasons: st.copyMap(st.reasons), ByMedia: st.copyMap(st.media)}
	st.mu.Lock()
	s.Sessions = SessionCounts{Created: st.sessions}
	st.mu.Unlock()
	s.Sessions.ByState, s.Sessions.FailedByCode = st.copyMap(st.states), st.copyMap(st.codes)
	s.DialMS, s.OpenedMS, s.PongRTTMS = percentiles(&st.dial), percentiles(&st.opened), percentiles(&st.pongRTT)
	s.ClosedMS, s.SendLagMS, s.PollMS = percentiles(&st.closed), percentiles(&st.sendLag), percentiles(&st.poll)
	s.Frames = FrameCounts{Planned: st.framesPlanned.Load(), Sent: st.framesSent.Load(), Bytes: st.bytes.Load(),
		Late: st.framesLate.Load(), Paused: st.framesPaused.Load(),
		AudioSeconds: float64(st.samplesSent.Load()) / sampleRate}
	s.Errors = ErrorCounts{Total: st.errorsTotal.Load(), ByKind: st.copyMap(st.errors)}
	st.mu.Lock()
	s.Errors.Examples = make(map[string]string, len(st.examples))
	for k, v := range st.examples {
		s.Errors.Examples[k] = v
	}
	st.mu.Unlock()
	return s
}
