package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// securityMetrics are the collectors of the identity provider and the
// authenticated interfaces; their methods implement api.SecurityObserver.
type securityMetrics struct {
	tokens      *prometheus.CounterVec
	authFailed  *prometheus.CounterVec
	mgmtChanges *prometheus.CounterVec
}

func newSecurityMetrics(f promauto.Factory) securityMetrics {
	return securityMetrics{
		tokens: f.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_oauth_token_requests_total",
			Help: "Token endpoint requests, by grant (client_credentials, refresh_token, other) and outcome (issued, or the OAuth error code, rate_limited, error).",
		}, []string{"grant", "outcome"}),
		authFailed: f.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_auth_failures_total",
			Help: "Requests refused for their credentials or origin, by interface (streaming, token, tenant, management) and reason (missing, invalid, expired, wrong_tenant, forbidden, ip_not_allowed, rate_limited).",
		}, []string{"interface", "reason"}),
		mgmtChanges: f.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_management_changes_total",
			Help: "Changes made through the management interface, by kind (api_key_created, allow_entry_removed, ...).",
		}, []string{"kind"}),
	}
}

// TokenRequest records one token endpoint request.
func (m *securityMetrics) TokenRequest(grant, outcome string) {
	m.tokens.WithLabelValues(grant, outcome).Inc()
}

// AuthFailure records one request refused for its credentials or origin.
func (m *securityMetrics) AuthFailure(iface, reason string) {
	m.authFailed.WithLabelValues(iface, reason).Inc()
}

// ManagementChange records one change through the management interface.
func (m *securityMetrics) ManagementChange(kind string) {
	m.mgmtChanges.WithLabelValues(kind).Inc()
}
