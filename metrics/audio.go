package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// audioMetrics are the collectors of the audio path: AudioHook streams and
// the per-call pipelines.
type audioMetrics struct {
	streamsActive prometheus.Gauge
	streamsEnded  *prometheus.CounterVec
	opened        prometheus.Histogram
	probes        prometheus.Counter
	frames        prometheus.Counter
	bytes         prometheus.Counter
	pongs         prometheus.Counter
	violations    *prometheus.CounterVec
	authFailures  *prometheus.CounterVec
	callsActive   prometheus.Gauge
	frameSeconds  prometheus.Histogram
	dropped       *prometheus.CounterVec
}

// dropReasons are the reasons of earshot_frames_dropped_total.
var dropReasons = []string{"queue_full", "undecodable"}

func newAudioMetrics(f promauto.Factory) audioMetrics {
	m := audioMetrics{
		streamsActive: f.NewGauge(prometheus.GaugeOpts{
			Name: "earshot_audiohook_streams_active",
			Help: "AudioHook connections open now.",
		}),
		streamsEnded: f.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_audiohook_streams_ended_total",
			Help: "AudioHook connections that ended, by reason (end, error, disconnect, reconnect, other, socket, violation).",
		}, []string{"reason"}),
		opened: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "earshot_audiohook_opened_latency_seconds",
			Help:    "Time from receiving open to sending opened.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
		}),
		probes: f.NewCounter(prometheus.CounterOpts{
			Name: "earshot_audiohook_probes_total",
			Help: "Connection probes answered (open with the null conversation id).",
		}),
		frames: f.NewCounter(prometheus.CounterOpts{
			Name: "earshot_audiohook_frames_received_total",
			Help: "Binary audio frames received.",
		}),
		bytes: f.NewCounter(prometheus.CounterOpts{
			Name: "earshot_audiohook_received_bytes_total",
			Help: "Bytes of binary audio received.",
		}),
		pongs: f.NewCounter(prometheus.CounterOpts{
			Name: "earshot_audiohook_pongs_total",
			Help: "Pongs sent in answer to pings.",
		}),
		violations: f.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_audiohook_protocol_violations_total",
			Help: "Client protocol violations answered with disconnect, by kind.",
		}, []string{"kind"}),
		authFailures: f.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_audiohook_auth_failures_total",
			Help: "AudioHook upgrades refused as unauthorized, by reason.",
		}, []string{"reason"}),
		callsActive: f.NewGauge(prometheus.GaugeOpts{
			Name: "earshot_calls_active",
			Help: "Calls whose audio a pipeline goroutine is processing now.",
		}),
		frameSeconds: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "earshot_frame_processing_seconds",
			Help:    "Time to run one received frame through a call's pipeline (decode, VAD, features, model).",
			Buckets: []float64{.00001, .000025, .00005, .0001, .00025, .0005, .001, .0025, .01},
		}),
		dropped: f.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_frames_dropped_total",
			Help: "Frames dropped before processing, by reason (queue_full: the call's goroutine fell behind; undecodable).",
		}, []string{"reason"}),
	}
	// Every reason exists at zero from the start, so that a rate or an
	// alert over drops has a series before the first drop.
	for _, r := range dropReasons {
		m.dropped.WithLabelValues(r)
	}
	return m
}

// AudioHookOpened records an opened answer and its latency.
func (m *audioMetrics) AudioHookOpened(latency time.Duration, probe bool) {
	m.opened.Observe(latency.Seconds())
	if probe {
		m.probes.Inc()
	}
}

// AudioHookStarted records a connection that was upgraded.
func (m *audioMetrics) AudioHookStarted() { m.streamsActive.Inc() }

// AudioHookEnded records a connection that ended.
func (m *audioMetrics) AudioHookEnded(reason string) {
	m.streamsActive.Dec()
	m.streamsEnded.WithLabelValues(reason).Inc()
}

// AudioHookFrame records a received binary frame.
func (m *audioMetrics) AudioHookFrame(bytes int) {
	m.frames.Inc()
	m.bytes.Add(float64(bytes))
}

// AudioHookPong records a pong.
func (m *audioMetrics) AudioHookPong() { m.pongs.Inc() }

// AudioHookViolation records a protocol violation.
func (m *audioMetrics) AudioHookViolation(kind string) { m.violations.WithLabelValues(kind).Inc() }

// AudioHookAuthFailed records a refused upgrade.
func (m *audioMetrics) AudioHookAuthFailed(reason string) {
	m.authFailures.WithLabelValues(reason).Inc()
}

// CallsActive moves the live-call gauge.
func (m *audioMetrics) CallsActive(delta int) { m.callsActive.Add(float64(delta)) }

// FrameProcessed records one frame's pipeline time.
func (m *audioMetrics) FrameProcessed(elapsed time.Duration) {
	m.frameSeconds.Observe(elapsed.Seconds())
}

// FrameDropped records a dropped frame.
func (m *audioMetrics) FrameDropped(reason string) { m.dropped.WithLabelValues(reason).Inc() }
