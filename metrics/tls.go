package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// TLSCertificate exports when the served TLS certificate expires, for an
// alert well before it does. Its methods are safe for concurrent use.
type TLSCertificate struct {
	expiry prometheus.Gauge
}

// NewTLSCertificate creates the collector and registers it on reg. Until
// Set is called it reads 0: the server serves no TLS itself (plain HTTP,
// or TLS ended by a load balancer in front).
func NewTLSCertificate(reg prometheus.Registerer) *TLSCertificate {
	return &TLSCertificate{expiry: promauto.With(reg).NewGauge(prometheus.GaugeOpts{
		Name: "earshot_tls_certificate_expiry_timestamp_seconds",
		Help: "Expiry (NotAfter) of the TLS certificate the server serves, in Unix seconds; 0 when it serves no TLS itself.",
	})}
}

// Set records the expiry of the certificate being served.
func (c *TLSCertificate) Set(notAfter time.Time) {
	c.expiry.Set(float64(notAfter.Unix()))
}
