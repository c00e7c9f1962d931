package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/earshot-voice/earshot/auth"
)

// writeCertificate writes a self-signed certificate for 127.0.0.1 that
// expires at notAfter, and its key, as PEM files.
func writeCertificate(t *testing.T, notAfter time.Time) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "earshot test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter, DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestTLSCertificateExpiryMetric: a server with TLS exports its
// certificate's expiry; one without exports 0.
func TestTLSCertificateExpiryMetric(t *testing.T) {
	isolateEnv(t)
	const name = "earshot_tls_certificate_expiry_timestamp_seconds"
	notAfter := time.Now().Add(40 * 24 * time.Hour).Truncate(time.Second)
	cert, key := writeCertificate(t, notAfter)
	withTLS := start(t, "--data-dir", t.TempDir(), "--tls-cert", cert, "--tls-key", key, "--metrics-addr", "127.0.0.1:0")
	defer withTLS.stop()
	if got := scrape(t, "http://"+withTLS.listener(t, "metrics")+"/metrics")[name]; got != float64(notAfter.Unix()) {
		t.Errorf("with TLS: %s = %v, want %d", name, got, notAfter.Unix())
	}

	plain := start(t, "--data-dir", t.TempDir(), "--metrics-addr", "127.0.0.1:0")
	defer plain.stop()
	if got, ok := scrape(t, "http://"+plain.listener(t, "metrics")+"/metrics")[name]; !ok || got != 0 {
		t.Errorf("without TLS: %s = %v (exported: %v), want 0", name, got, ok)
	}

	// A certificate that does not load stops the start before the store
	// is initialised.
	dir := t.TempDir()
	if err := run(t.Context(), []string{"serve", "--data-dir", dir, "--addr", "127.0.0.1:0",
		"--tls-cert", key, "--tls-key", key, "--log-level", "error"}, io.Discard, io.Discard); err == nil {
		t.Error("a key given as the certificate started")
	}
	if _, err := os.Stat(filepath.Join(dir, auth.CredentialsFileName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the failed start initialised the store: %v", err)
	}
}
