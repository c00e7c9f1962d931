// Package metrics defines every Prometheus collector of Earshot in one
// place, registered on a registry the caller owns (no default registry, no
// globals). Names follow the Prometheus conventions (earshot_ prefix, base
// units, _total for counters) and every label is a bounded enumeration:
// routes are ServeMux patterns, never raw paths or ids.
//
// Metrics implements the small observer interfaces that packages api and
// session declare.
package metrics

import (
	"runtime"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Build describes the running binary for earshot_build_info.
type Build struct {
	Version  string
	Revision string
}

// Metrics holds Earshot's collectors. Its methods are safe for concurrent
// use.
type Metrics struct {
	httpRequests    *prometheus.CounterVec
	httpDuration    *prometheus.HistogramVec
	sessions        *prometheus.CounterVec
	failures        *prometheus.CounterVec
	audioMetrics    // audio.go
	securityMetrics // security.go
	storeMetrics    // store.go
}

// New creates the collectors and registers them on reg.
func New(reg prometheus.Registerer, build Build) *Metrics {
	f := promauto.With(reg)
	f.NewGaugeVec(prometheus.GaugeOpts{
		Name: "earshot_build_info",
		Help: "Always 1; the labels describe the running binary.",
	}, []string{"version", "revision", "goversion"}).WithLabelValues(build.Version, build.Revision, runtime.Version()).Set(1)
	return &Metrics{
		audioMetrics:    newAudioMetrics(f),
		securityMetrics: newSecurityMetrics(f),
		storeMetrics:    newStoreMetrics(f),
		httpRequests: f.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		httpDuration: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "earshot_http_request_duration_seconds",
			Help:    "Time to answer HTTP requests, by route pattern and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route", "method"}),
		sessions: f.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_sessions_total",
			Help: "Sessions that entered a state, by kind (register, verify) and state.",
		}, []string{"kind", "state"}),
		failures: f.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_session_failures_total",
			Help: "Sessions that ended FAILED, by kind and error code.",
		}, []string{"kind", "code"}),
	}
}

// ObserveRequest records one answered HTTP request. route is the matched
// ServeMux pattern ("unmatched" when none matched).
func (m *Metrics) ObserveRequest(route, method string, code int, elapsed time.Duration) {
	m.httpRequests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
	m.httpDuration.WithLabelValues(route, method).Observe(elapsed.Seconds())
}

// SessionEntered records that a session entered state; code is the
// failure code of a FAILED session.
func (m *Metrics) SessionEntered(kind, state, code string) {
	m.sessions.WithLabelValues(kind, state).Inc()
	if code != "" {
		m.failures.WithLabelValues(kind, code).Inc()
	}
}
