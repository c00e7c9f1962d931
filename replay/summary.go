package replay

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// Summary is what a run measured. Its JSON form is the --json file of
// earshot replay; the keys are stable (new ones may be added).
type Summary struct {
	StartedAt      time.Time `json:"started_at"`
	ElapsedSeconds float64   `json:"elapsed_s"`
	URL            string    `json:"url"`
	Settings       Settings  `json:"settings"`

	Calls    CallCounts    `json:"calls"`
	Sessions SessionCounts `json:"sessions"`

	// DialMS is the time of the HTTP upgrade; OpenedMS from sending open
	// to receiving opened; PongRTTMS from sending ping to receiving pong;
	// ClosedMS from sending close to receiving closed (the server's
	// finalisation shows here); SendLagMS how far behind its schedule
	// each paced frame went out; PollMS from the end of a call to its
	// session's terminal state.
	DialMS    Percentiles `json:"dial_ms"`
	OpenedMS  Percentiles `json:"opened_ms"`
	PongRTTMS Percentiles `json:"pong_rtt_ms"`
	ClosedMS  Percentiles `json:"closed_ms"`
	SendLagMS Percentiles `json:"send_lag_ms"`
	PollMS    Percentiles `json:"session_poll_ms"`

	Frames FrameCounts `json:"frames"`
	Errors ErrorCounts `json:"errors"`

	// Generator is the replay's own CPU and memory (nil where the system
	// does not report them); Server what the server's metrics endpoint
	// reported, with Options.ServerMetrics.
	Generator *Generator `json:"generator,omitempty"`
	Server    *Server    `json:"server,omitempty"`
}

// Settings echo the options of the run.
type Settings struct {
	Calls         int      `json:"calls"`
	Concurrency   int      `json:"concurrency"`
	Rate          float64  `json:"rate"`
	Speed         float64  `json:"speed"`
	FrameMS       float64  `json:"frame_ms"`
	DurationCapS  float64  `json:"duration_cap_s,omitempty"`
	Register      bool     `json:"register"`
	RegisterShare float64  `json:"register_share,omitempty"`
	Signed        bool     `json:"signed"`
	Files         []string `json:"files"`
	AudioSeconds  float64  `json:"audio_s"` // of all the files together
	RecordingsMiB float64  `json:"recordings_mib"`
}

// CallCounts count calls by outcome. Completed + Disconnected + Failed +
// Cancelled = Total.
type CallCounts struct {
	// Total is the calls started (fewer than asked when the run was
	// cancelled).
	Total int64 `json:"total"`
	// Completed calls streamed their audio and ended with close "end"
	// and closed.
	Completed int64 `json:"completed"`
	// Disconnected calls were ended by the server with disconnect
	// "completed" (Earshot does so once a session has its audio).
	Disconnected int64 `json:"disconnected"`
	// Failed calls: FailedByKind says why.
	Failed       int64            `json:"failed"`
	FailedByKind map[string]int64 `json:"failed_by_kind"`
	// Cancelled calls were ended early because the run was cancelled.
	Cancelled int64 `json:"cancelled"`
	// DisconnectReasons counts every disconnect the server sent, by
	// reason, whatever the call's outcome.
	DisconnectReasons map[string]int64 `json:"disconnect_reasons"`
	// ByMedia counts the calls that opened by the media the server
	// selected (external, internal, external+internal, none).
	ByMedia map[string]int64 `json:"by_media"`
}

// SessionCounts count the register sessions of a run with Register.
type SessionCounts struct {
	Created int64 `json:"created"`
	// ByState counts sessions by the state they were in when polling
	// ended: SUCCESS, FAILED, or PROCESSING_AUDIO when the poll timed out.
	ByState map[string]int64 `json:"by_state"`
	// FailedByCode counts FAILED sessions by error code.
	FailedByCode map[string]int64 `json:"failed_by_code"`
}

// FrameCounts count binary frames.
type FrameCounts struct {
	// Planned is the frames the calls that opened would send in full.
	Planned int64 `json:"planned"`
	Sent    int64 `json:"sent"`
	Bytes   int64 `json:"bytes"`
	// Late frames went out more than one frame period behind their
	// schedule: the sender could not keep pace. Never counted at speed 0.
	Late int64 `json:"late"`
	// Paused frames were not sent because the server asked for a pause.
	Paused int64 `json:"paused"`
	// AudioSeconds is the audio sent, per channel, over all calls.
	AudioSeconds float64 `json:"audio_s"`
}

// ErrorCounts count errors by kind, with the first message of each kind.
type ErrorCounts struct {
	Total    int64             `json:"total"`
	ByKind   map[string]int64  `json:"by_kind"`
	Examples map[string]string `json:"examples"`
}

// Percentiles summarise a Histogram, in milliseconds.
type Percentiles struct {
	Count uint64  `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func percentiles(h *Histogram) Percentiles {
	return Percentiles{Count: h.Count(), Mean: ms(h.Mean()), P50: ms(h.Quantile(.5)), P90: ms(h.Quantile(.9)),
		P99: ms(h.Quantile(.99)), Max: ms(h.Max())}
}

// Problems lists what makes the run a failure: failed calls, and with
// Register, sessions that did not reach SUCCESS. Cancelled calls are not
// problems. Empty means the run passed.
func (s *Summary) Problems() []string {
	var p []string
	if s.Calls.Failed > 0 {
		p = append(p, fmt.Sprintf("%d of %d calls failed (%s)", s.Calls.Failed, s.Calls.Total, joinCounts(s.Calls.FailedByKind)))
	}
	if s.Settings.Register {
		var other int64
		for state, n := range s.Sessions.ByState {
			if state != "SUCCESS" {
				other += n
			}
		}
		// A call whose register request failed has failed (above); every
		// session created must reach SUCCESS.
		if other > 0 || s.Sessions.ByState["SUCCESS"] < s.Sessions.Created {
			p = append(p, fmt.Sprintf("%d of %d sessions reached SUCCESS (%s)", s.Sessions.ByState["SUCCESS"],
				s.Sessions.Created, joinCounts(s.Sessions.ByState)))
		}
	}
	return p
}

// joinCounts formats a count map as "a 3, b 1", largest first.
func joinCounts(m map[string]int64) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return int(m[b] - m[a])
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", k, m[k])
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// WriteText writes the summary for a person to read.
func (s *Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	rate := "unbounded"
	if s.Settings.Rate > 0 {
		rate = fmt.Sprintf("%g/s", s.Settings.Rate)
	}
	speed := "as fast as possible"
	if s.Settings.Speed > 0 {
		speed = fmt.Sprintf("%g× real time", s.Settings.Speed)
	}
	fmt.Fprintf(&b, "replay of %d file(s) to %s: %d calls in %.1f s (concurrency %d, rate %s, %s, %g ms frames)\n",
		len(s.Settings.Files), s.URL, s.Calls.Total, s.ElapsedSeconds, s.Settings.Concurrency, rate, speed, s.Settings.FrameMS)
	fmt.Fprintf(&b, "calls      %d completed, %d disconnected by the server, %d failed, %d cancelled\n",
		s.Calls.Completed, s.Calls.Disconnected, s.Calls.Failed, s.Calls.Cancelled)
	if s.Calls.Failed > 0 {
		fmt.Fprintf(&b, "  failed   %s\n", joinCounts(s.Calls.FailedByKind))
	}
	if len(s.Calls.DisconnectReasons) > 0 {
		fmt.Fprintf(&b, "  disconnect reasons  %s\n", joinCounts(s.Calls.DisconnectReasons))
	}
	fmt.Fprintf(&b, "  media    %s\n", joinCounts(s.Calls.ByMedia))
	if s.Settings.Register {
		fmt.Fprintf(&b, "sessions   %d created; %s\n", s.Sessions.Created, joinCounts(s.Sessions.ByState))
		if len(s.Sessions.FailedByCode) > 0 {
			fmt.Fprintf(&b, "  failed   %s\n", joinCounts(s.Sessions.FailedByCode))
		}
	}
	fmt.Fprintf(&b, "%-10s %8s %8s %8s %8s %8s %8s\n", "ms", "count", "mean", "p50", "p90", "p99", "max")
	for _, row := range []struct {
		name string
		p    Percentiles
	}{{"dial", s.DialMS}, {"opened", s.OpenedMS}, {"pong rtt", s.PongRTTMS}, {"closed", s.ClosedMS},
		{"send lag", s.SendLagMS}, {"session", s.PollMS}} {
		if row.p.Count == 0 {
			continue
		}
		fmt.Fprintf(&b, "%-10s %8d %8.2f %8.2f %8.2f %8.2f %8.2f\n", row.name, row.p.Count, row.p.Mean, row.p.P50, row.p.P90, row.p.P99, row.p.Max)
	}
	fmt.Fprintf(&b, "frames     %d of %d sent (%.1f MiB, %.0f s of audio), %d late, %d paused\n",
		s.Frames.Sent, s.Frames.Planned, float64(s.Frames.Bytes)/(1<<20), s.Frames.AudioSeconds, s.Frames.Late, s.Frames.Paused)
	if g := s.Generator; g != nil {
		fmt.Fprintf(&b, "replay     CPU %.1f s user + %.1f s system = %.3f ms per call-second; peak RSS %.0f MiB\n",
			g.UserSeconds, g.SystemSeconds, g.MSPerCallSecond, g.MaxRSSMiB)
	}
	if sv := s.Server; sv != nil {
		fmt.Fprintf(&b, "server     CPU %.1f s = %.3f ms per call-second (%.3f on the plateau of %.0f s); RSS %.0f MiB at %d streams (%.1f KiB per call, %.1f KiB per added call), %.0f MiB before\n",
			sv.CPUSeconds, sv.MSPerCallSecond, sv.PlateauMSPerCallSecond, sv.PlateauSeconds, sv.RSSAtPeakMiB, sv.PeakStreams,
			sv.RSSPerCallKiB, sv.RSSPerAddedCallKiB, sv.RSSBeforeMiB)
		fmt.Fprintf(&b, "  frames   %d received, %d dropped", sv.FramesReceived, sv.FramesDropped)
		if sv.ScrapeErrors > 0 {
			fmt.Fprintf(&b, "; %d of %d scrapes failed: %s", sv.ScrapeErrors, sv.ScrapeErrors+sv.Samples, sv.ScrapeError)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "errors     %d", s.Errors.Total)
	if s.Errors.Total > 0 {
		fmt.Fprintf(&b, ": %s", joinCounts(s.Errors.ByKind))
		keys := slices.Sorted(maps.Keys(s.Errors.Examples))
		for _, k := range keys {
			fmt.Fprintf(&b, "\n  %s: %s", k, s.Errors.Examples[k])
		}
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}
