package metrics_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/earshot-voice/earshot/metrics"
)

func TestMetricsLint(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := metrics.New(reg, metrics.Build{Version: "v1", Revision: "abc"})
	m.ObserveRequest("/v1/models", "GET", 200, time.Millisecond)
	m.SessionEntered("register", "PROCESSING_AUDIO", "")
	m.SessionEntered("register", "FAILED", "NoAudio")
	m.AudioHookStarted()
	m.AudioHookOpened(time.Millisecond, false)
	m.AudioHookFrame(3200)
	m.AudioHookPong()
	m.AudioHookViolation("seq")
	m.AudioHookAuthFailed("mismatch")
	m.AudioHookEnded("end")
	m.CallsActive(1)
	m.FrameProcessed(20 * time.Microsecond)
	m.FrameDropped("queue_full")
	m.TokenRequest("client_credentials", "issued")
	m.AuthFailure("tenant", "expired")
	m.ManagementChange("api_key_created")
	m.BreakerState(2)
	m.StoreCall("session", time.Millisecond, false)
	m.StoreCall("heartbeat", 0, true)
	m.SessionsActive("register", 1)
	m.LeasesExpired(1)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	if n, err := testutil.GatherAndCount(reg); err != nil || n < 19 {
		t.Fatalf("gathered %d series, %v", n, err)
	}
}

func TestSessionCounters(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, metrics.Build{})
	m.SessionEntered("register", "PROCESSING_AUDIO", "")
	m.SessionEntered("register", "PROCESSING_AUDIO", "")
	m.SessionEntered("register", "FAILED", "Cancelled")
	want := `
# HELP earshot_session_failures_total Sessions that ended FAILED, by kind and error code.
# TYPE earshot_session_failures_total counter
earshot_session_failures_total{code="Cancelled",kind="register"} 1
# HELP earshot_sessions_total Sessions that entered a state, by kind (register, verify) and state.
# TYPE earshot_sessions_total counter
earshot_sessions_total{kind="register",state="FAILED"} 1
earshot_sessions_total{kind="register",state="PROCESSING_AUDIO"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "earshot_sessions_total", "earshot_session_failures_total"); err != nil {
		t.Fatal(err)
	}
}

func ExampleNew() {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, metrics.Build{Version: "v1.0.0"})
	m.ObserveRequest("/v1/register_session/{id}", "GET", 200, 2*time.Millisecond)
	n, _ := testutil.GatherAndCount(reg, "earshot_http_requests_total")
	fmt.Println("series:", n)
	// Output: series: 1
}

func TestSecurityCounters(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, metrics.Build{})
	m.TokenRequest("client_credentials", "issued")
	m.TokenRequest("client_credentials", "issued")
	m.TokenRequest("refresh_token", "invalid_grant")
	m.AuthFailure("management", "ip_not_allowed")
	m.ManagementChange("allow_entry_removed")
	want := `
# HELP earshot_auth_failures_total Requests refused for their credentials or origin, by interface (streaming, token, tenant, management) and reason (missing, invalid, expired, wrong_tenant, forbidden, ip_not_allowed, rate_limited).
# TYPE earshot_auth_failures_total counter
earshot_auth_failures_total{interface="management",reason="ip_not_allowed"} 1
# HELP earshot_management_changes_total Changes made through the management interface, by kind (api_key_created, allow_entry_removed, ...).
# TYPE earshot_management_changes_total counter
earshot_management_changes_total{kind="allow_entry_removed"} 1
# HELP earshot_oauth_token_requests_total Token endpoint requests, by grant (client_credentials, refresh_token, other) and outcome (issued, or the OAuth error code, rate_limited, error).
# TYPE earshot_oauth_token_requests_total counter
earshot_oauth_token_requests_total{grant="client_credentials",outcome="issued"} 2
earshot_oauth_token_requests_total{grant="refresh_token",outcome="invalid_grant"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"earshot_oauth_token_requests_total", "earshot_auth_failures_total", "earshot_management_changes_total"); err != nil {
		t.Fatal(err)
	}
}

func TestStoreMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, metrics.Build{})
	m.BreakerState(2)
	m.SessionsActive("verify", 2)
	m.SessionsActive("verify", -1)
	m.StoreCall("claim_session", 0, true)
	m.StoreCall("claim_session", time.Millisecond, false)
	m.LeasesExpired(2)
	want := `
# HELP earshot_replica_leases_expired_total Replicas this replica found dead (lease not renewed), whose sessions' streams were then taken as cut.
# TYPE earshot_replica_leases_expired_total counter
earshot_replica_leases_expired_total 2
# HELP earshot_sessions_active Sessions that a stream of this replica feeds now, by kind (register, verify).
# TYPE earshot_sessions_active gauge
earshot_sessions_active{kind="register"} 0
earshot_sessions_active{kind="verify"} 1
# HELP earshot_store_breaker_state State of the store's circuit breaker: 0 closed, 1 half-open, 2 open (the store is failing; REST answers 503).
# TYPE earshot_store_breaker_state gauge
earshot_store_breaker_state 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "earshot_replica_leases_expired_total",
		"earshot_sessions_active", "earshot_store_breaker_state"); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	errs := map[string]float64{}
	for _, f := range families {
		if f.GetName() == "earshot_store_errors_total" {
			for _, m := range f.GetMetric() {
				errs[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	if len(errs) != len(metrics.StoreOperations) || errs["claim_session"] != 1 || errs["session"] != 0 {
		t.Errorf("store errors %v: want every operation, one claim_session error", errs)
	}
	if n, _ := testutil.GatherAndCount(reg, "earshot_store_operation_duration_seconds"); n != 1 {
		t.Errorf("%d duration series, want 1 (refused calls are not timed)", n)
	}
}

func TestTLSCertificate(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c := metrics.NewTLSCertificate(reg)
	read := func() float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil || len(mfs) != 1 {
			t.Fatalf("gathered %v, %v", mfs, err)
		}
		return mfs[0].GetMetric()[0].GetGauge().GetValue()
	}
	if v := read(); v != 0 {
		t.Errorf("without TLS: %v, want 0", v)
	}
	c.Set(time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC))
	if v := read(); v != 1803902400 {
		t.Errorf("expiry %v, want 1803902400", v)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) != 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

func TestFramesDroppedExistBeforeTheFirstDrop(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics.New(reg, metrics.Build{})
	want := `
# HELP earshot_frames_dropped_total Frames dropped before processing, by reason (queue_full: the call's goroutine fell behind; undecodable).
# TYPE earshot_frames_dropped_total counter
earshot_frames_dropped_total{reason="queue_full"} 0
earshot_frames_dropped_total{reason="undecodable"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "earshot_frames_dropped_total"); err != nil {
		t.Error(err)
	}
}
