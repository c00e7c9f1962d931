package replay

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Generator is what the replay itself used: the share of the machine a
// load test leaves to the server when both run on one host.
type Generator struct {
	UserSeconds   float64 `json:"cpu_user_s"`
	SystemSeconds float64 `json:"cpu_system_s"`
	// MSPerCallSecond is the generator's CPU time (user and system) per
	// second of call audio streamed, in milliseconds.
	MSPerCallSecond float64 `json:"cpu_ms_per_call_second"`
	// MaxRSSMiB is the process's peak resident memory.
	MaxRSSMiB float64 `json:"max_rss_mib"`
}

// Server is what the server's Prometheus endpoint (Options.ServerMetrics)
// reported over the run: the process collector's CPU and memory and, from
// an Earshot server, its streams and dropped frames. Absent metrics are 0.
type Server struct {
	URL string `json:"url"`
	// CPUSeconds is the rise of process_cpu_seconds_total over the run.
	CPUSeconds float64 `json:"cpu_s"`
	// MSPerCallSecond is CPUSeconds per second of call audio the run
	// streamed, in milliseconds: the server's cost of one call for one
	// second, upgrades and session work included.
	MSPerCallSecond float64 `json:"cpu_ms_per_call_second"`
	// PlateauMSPerCallSecond is the CPU per call-second while the live
	// streams stayed within 1 % of PeakStreams (the plateau of a ramped
	// run: upgrades and endings left out), over PlateauSeconds; 0 when
	// fewer than two samples fell on it.
	PlateauMSPerCallSecond float64 `json:"plateau_cpu_ms_per_call_second"`
	PlateauSeconds         float64 `json:"plateau_s"`
	// RSSBeforeMiB is process_resident_memory_bytes before the first call.
	RSSBeforeMiB float64 `json:"rss_before_mib"`
	// PeakStreams is the most live streams seen in one sample (the
	// server's earshot_audiohook_streams_active, else the replay's active
	// calls), and RSSAtPeakMiB the resident memory in that sample.
	PeakStreams  int64   `json:"peak_streams"`
	RSSAtPeakMiB float64 `json:"rss_at_peak_mib"`
	// RSSPerCallKiB is RSSAtPeakMiB over PeakStreams: the whole process,
	// its fixed part included. RSSPerAddedCallKiB leaves out what the
	// process held before the run.
	RSSPerCallKiB      float64 `json:"rss_per_call_kib"`
	RSSPerAddedCallKiB float64 `json:"rss_per_added_call_kib"`
	// FramesReceived and FramesDropped are the rises of
	// earshot_audiohook_frames_received_total and
	// earshot_frames_dropped_total (all reasons).
	FramesReceived int64 `json:"frames_received"`
	FramesDropped  int64 `json:"frames_dropped"`
	Samples        int   `json:"samples"`
	// ScrapeErrors counts samples that could not be read; the first
	// error is in ScrapeError.
	ScrapeErrors int    `json:"scrape_errors"`
	ScrapeError  string `json:"scrape_error,omitempty"`
}

// serverSample is one scrape of the server's metrics.
type serverSample struct {
	at                     time.Time
	cpu, rss               float64
	streams                float64
	hasStreams             bool
	framesRecv, framesDrop float64
}

// Names of the metrics a sample reads.
const (
	metricCPU        = "process_cpu_seconds_total"
	metricRSS        = "process_resident_memory_bytes"
	metricStreams    = "earshot_audiohook_streams_active"
	metricFramesRecv = "earshot_audiohook_frames_received_total"
	metricFramesDrop = "earshot_frames_dropped_total"
)

// maxMetricsBytes bounds one scrape.
const maxMetricsBytes = 8 << 20

// parseSample reads the metrics a sample needs from the Prometheus text
// exposition format. Counters and gauges with labels are summed.
func parseSample(r io.Reader) (serverSample, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(io.LimitReader(r, maxMetricsBytes))
	if err != nil {
		return serverSample{}, err
	}
	sum := func(name string) (float64, bool) {
		f, ok := fams[name]
		if !ok {
			return 0, false
		}
		var v float64
		for _, m := range f.GetMetric() {
			v += value(m)
		}
		return v, true
	}
	var s serverSample
	var ok bool
	if s.cpu, ok = sum(metricCPU); !ok {
		return serverSample{}, fmt.Errorf("no %s: is this a Prometheus endpoint with the process collector?", metricCPU)
	}
	s.rss, _ = sum(metricRSS)
	s.streams, s.hasStreams = sum(metricStreams)
	s.framesRecv, _ = sum(metricFramesRecv)
	s.framesDrop, _ = sum(metricFramesDrop)
	return s, nil
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}

// serverWatch samples the server's metrics during a run.
type serverWatch struct {
	url    string
	client *http.Client
	active func() int64 // the replay's own count, when the server has no streams gauge

	mu          sync.Mutex
	first, last serverSample
	peakStreams int64
	rssAtPeak   float64
	history     []point // every sample, for the plateau
	errors      int
	firstError  string
	stop        chan struct{}
	done        chan struct{}
}

// point is a sample reduced to what the plateau needs.
type point struct {
	at      time.Time
	cpu     float64
	streams int64
}

// plateau returns the CPU per stream-second, in milliseconds, between the
// first and the last sample with at least 99 % of peak streams, and the
// seconds between them. Samples in between with fewer streams (a dip) are
// counted at their own streams.
func plateau(history []point, peak int64) (msPerCallSecond, seconds float64) {
	first, last := -1, -1
	for i, p := range history {
		if p.streams > 0 && float64(p.streams) >= 0.99*float64(peak) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 || last == first {
		return 0, 0
	}
	var callSeconds float64
	for i := first + 1; i <= last; i++ {
		dt := history[i].at.Sub(history[i-1].at).Seconds()
		callSeconds += dt * float64(history[i].streams+history[i-1].streams) / 2
	}
	seconds = history[last].at.Sub(history[first].at).Seconds()
	if callSeconds <= 0 {
		return 0, seconds
	}
	return 1000 * (history[last].cpu - history[first].cpu) / callSeconds, seconds
}

// serverSampleEvery is how often the server's metrics are read.
const serverSampleEvery = 2 * time.Second

// startServerWatch takes the first sample (an error there ends the run
// before any call: the URL is wrong) and then samples every
// serverSampleEvery until stop.
func startServerWatch(ctx context.Context, url string, active func() int64) (*serverWatch, error) {
	w := &serverWatch{url: url, client: &http.Client{Timeout: 5 * time.Second}, active: active,
		stop: make(chan struct{}), done: make(chan struct{})}
	s, err := w.scrape(ctx)
	if err != nil {
		return nil, fmt.Errorf("replay: server metrics %s: %w", url, err)
	}
	w.first = s
	w.record(s)
	go w.loop(ctx)
	return w, nil
}

func (w *serverWatch) loop(ctx context.Context) {
	defer close(w.done)
	t := time.NewTicker(serverSampleEvery)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.sample(ctx)
		}
	}
}

func (w *serverWatch) scrape(ctx context.Context) (serverSample, error) {
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, w.url, nil)
	if err != nil {
		return serverSample{}, err
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := w.client.Do(req)
	if err != nil {
		return serverSample{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return serverSample{}, fmt.Errorf("status %s", resp.Status)
	}
	s, err := parseSample(resp.Body)
	s.at = time.Now()
	return s, err
}

// sample takes one sample and records the peak.
func (w *serverWatch) sample(ctx context.Context) {
	s, err := w.scrape(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if w.errors == 0 {
			w.firstError = err.Error()
		}
		w.errors++
		return
	}
	w.record(s)
}

// record keeps a sample: the latest, the peak of streams, the plateau's
// history. The caller holds w.mu, or is the only goroutine.
func (w *serverWatch) record(s serverSample) {
	streams := int64(s.streams)
	if !s.hasStreams {
		streams = w.active()
	}
	if streams > w.peakStreams || (streams == w.peakStreams && s.rss > w.rssAtPeak) {
		w.peakStreams, w.rssAtPeak = streams, s.rss
	}
	w.history = append(w.history, point{at: s.at, cpu: s.cpu, streams: streams})
	w.last = s
}

// finish takes the last sample and returns the figures; audioSeconds is
// the call audio the run streamed.
func (w *serverWatch) finish(ctx context.Context, audioSeconds float64) *Server {
	close(w.stop)
	<-w.done
	w.sample(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	const mib = 1 << 20
	s := &Server{URL: w.url, CPUSeconds: w.last.cpu - w.first.cpu, RSSBeforeMiB: w.first.rss / mib,
		PeakStreams: w.peakStreams, RSSAtPeakMiB: w.rssAtPeak / mib,
		FramesReceived: int64(w.last.framesRecv - w.first.framesRecv), FramesDropped: int64(w.last.framesDrop - w.first.framesDrop),
		Samples: len(w.history), ScrapeErrors: w.errors, ScrapeError: w.firstError}
	if audioSeconds > 0 {
		s.MSPerCallSecond = 1000 * s.CPUSeconds / audioSeconds
	}
	s.PlateauMSPerCallSecond, s.PlateauSeconds = plateau(w.history, w.peakStreams)
	if w.peakStreams > 0 {
		s.RSSPerCallKiB = w.rssAtPeak / 1024 / float64(w.peakStreams)
		s.RSSPerAddedCallKiB = (w.rssAtPeak - w.first.rss) / 1024 / float64(w.peakStreams)
	}
	return s
}
