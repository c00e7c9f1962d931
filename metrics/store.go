package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// storeMetrics are the collectors of the store and of the replicas that
// share it: the circuit breaker, the operations, the sessions each replica
// feeds and the leases it found expired.
type storeMetrics struct {
	breaker        prometheus.Gauge
	opDuration     *prometheus.HistogramVec
	opErrors       *prometheus.CounterVec
	sessionsActive *prometheus.GaugeVec
	leasesExpired  prometheus.Counter
}

// StoreOperations are the values of the operation label: the session
// manager's store operations, and api_key (the REST path's API key lookup,
// guarded by the same breaker).
var StoreOperations = []string{
	"create_audio_settings", "audio_settings", "create_session", "session", "update_session", "update_progress",
	"active_sessions", "live_session", "claim_session", "waiting_sessions", "fail_interrupted", "heartbeat", "remove_replica",
	"expire_replicas", "release_claims", "notify", "api_key",
}

func newStoreMetrics(f promauto.Factory) storeMetrics {
	m := storeMetrics{
		breaker: f.NewGauge(prometheus.GaugeOpts{
			Name: "earshot_store_breaker_state",
			Help: "State of the store's circuit breaker: 0 closed, 1 half-open, 2 open (the store is failing; REST answers 503).",
		}),
		opDuration: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "earshot_store_operation_duration_seconds",
			Help:    "Time the store took per operation, by operation; calls refused by the open breaker are not timed.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"operation"}),
		opErrors: f.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_store_errors_total",
			Help: "Store operations that failed (including those the open breaker refused), by operation.",
		}, []string{"operation"}),
		sessionsActive: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "earshot_sessions_active",
			Help: "Sessions that a stream of this replica feeds now, by kind (register, verify).",
		}, []string{"kind"}),
		leasesExpired: f.NewCounter(prometheus.CounterOpts{
			Name: "earshot_replica_leases_expired_total",
			Help: "Replicas this replica found dead (lease not renewed), whose sessions' streams were then taken as cut.",
		}),
	}
	for _, op := range StoreOperations {
		m.opErrors.WithLabelValues(op)
	}
	for _, kind := range []string{"register", "verify"} {
		m.sessionsActive.WithLabelValues(kind)
	}
	return m
}

// BreakerState records the store breaker's state: 0 closed, 1 half-open,
// 2 open.
func (m *storeMetrics) BreakerState(state int) { m.breaker.Set(float64(state)) }

// StoreCall records one store operation: its duration when it ran
// (elapsed > 0) and whether it failed.
func (m *storeMetrics) StoreCall(op string, elapsed time.Duration, failed bool) {
	if elapsed > 0 {
		m.opDuration.WithLabelValues(op).Observe(elapsed.Seconds())
	}
	if failed {
		m.opErrors.WithLabelValues(op).Inc()
	}
}

// SessionsActive records that the sessions of kind fed here changed by
// delta.
func (m *storeMetrics) SessionsActive(kind string, delta int) {
	m.sessionsActive.WithLabelValues(kind).Add(float64(delta))
}

// LeasesExpired records n replicas found dead.
func (m *storeMetrics) LeasesExpired(n int) { m.leasesExpired.Add(float64(n)) }
