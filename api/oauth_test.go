package api_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"math"
	"math/big"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/earshot-voice/earshot/api"
	"github.com/earshot-voice/earshot/auth"
	"github.com/earshot-voice/earshot/codec"
	"github.com/earshot-voice/earshot/metrics"
	"github.com/earshot-voice/earshot/session"
	"github.com/earshot-voice/earshot/store"
	"github.com/earshot-voice/earshot/voiceprint"
)

// testClock is a settable clock shared by the issuer, the signing keys
// and the limiters of an idEnv.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// idEnv is a running API with the identity provider, the tenant-scoped
// and the management interfaces over a fresh SQLite store. Tenant
// "default" has the bootstrap credentials; tenant "other" an OAuth client
// and a streaming admin key. Services are streaming and billing; requests
// come from 127.0.0.1, which is also a trusted proxy, so that a test can
// speak from any address with X-Forwarded-For.
type idEnv struct {
	srv     *httptest.Server
	clock   *testClock
	creds   *auth.Credentials
	issuer  *auth.Issuer
	keys    *auth.Keys
	store   *store.Store
	reg     *prometheus.Registry
	audit   *observer.ObservedLogs
	all     *observer.ObservedLogs // every log entry, audit included
	scorer  *countingScorer
	model   string
	secrets []string // every secret the env knows, none of which may be logged

	otherClientID, otherClientSecret string // tenant other
	otherKey                         string // tenant other, streaming, admin
	billingKey                       string // tenant default, billing, admin
	userKey                          string // tenant default, streaming, user
}

type idOptions struct {
	scorer    bool             // wire a countingScorer
	singles   api.SingleScorer // wire this scorer instead
	real      bool             // wire the service's scorer (speaker models, credential key)
	addrBurst int              // default 1000: the table tests must not trip it
	keyBurst  int              // default 1000
	maxUpload int64            // default 64 KiB
	// readTimeout and minUploadRate: Options.RequestReadTimeout and
	// Options.MinUploadRate (default: the server's defaults).
	readTimeout   time.Duration
	minUploadRate int64
}

func newIDEnv(t *testing.T, o idOptions) *idEnv {
	t.Helper()
	ctx := t.Context()
	core, all := observer.New(zapcore.DebugLevel)
	log := zap.New(core)
	st, mk, creds := bootstrapped(t, zap.NewNop())
	clock := &testClock{t: time.Now().UTC().Truncate(time.Second)}
	e := &idEnv{clock: clock, creds: creds, store: st, keys: auth.NewKeys(st, mk), reg: prometheus.NewRegistry()}
	e.secrets = []string{creds.AdminPassword, creds.AdminToken, creds.OAuthClientSecret, creds.APIKey, creds.AudioHookClientSecret}

	// The issuer's URL is the server's, known once it listens.
	var handler http.Handler
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(e.srv.Close)
	signing := auth.NewSigningKeys(st, mk, auth.SigningKeysOptions{Now: clock.Now})
	e.issuer = auth.NewIssuer(st, signing, mk, auth.IssuerOptions{PublicURL: e.srv.URL, Now: clock.Now})

	if err := st.AddTenant(ctx, auth.Tenant{ID: "other", CreatedAt: clock.Now()}); err != nil {
		t.Fatal(err)
	}
	oc, secret, err := e.issuer.CreateClient(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	e.otherClientID, e.otherClientSecret = oc.ID, secret
	e.otherKey = e.newKey(t, auth.NewKey{TenantID: "other", Role: auth.RoleAdmin})
	e.billingKey = e.newKey(t, auth.NewKey{TenantID: "default", Service: "billing", Role: auth.RoleAdmin})
	e.userKey = e.newKey(t, auth.NewKey{TenantID: "default"})
	allow := auth.NewAllowList(st)
	for _, a := range []struct{ tenant, service string }{{"default", "billing"}, {"other", "streaming"}} {
		if _, err := allow.Add(ctx, a.tenant, a.service, netip.MustParsePrefix("127.0.0.0/8")); err != nil {
			t.Fatal(err)
		}
	}
	e.secrets = append(e.secrets, e.otherClientSecret, e.otherKey, e.billingKey, e.userKey)

	if o.addrBurst == 0 {
		o.addrBurst = 1000
	}
	if o.keyBurst == 0 {
		o.keyBurst = 1000
	}
	if o.maxUpload == 0 {
		o.maxUpload = 64 << 10
	}
	sealer, err := voiceprint.NewSealerAEAD(mk.NewAEAD("credential seal v1"))
	if err != nil {
		t.Fatal(err)
	}
	sessions := session.NewManager(st, voiceprint.NewRegistry(), session.Options{Sealer: sealer}, log)
	t.Cleanup(sessions.Close)
	e.model = sessions.Models()[0].Hash
	m := metrics.New(e.reg, metrics.Build{})
	auditCore, auditLogs := observer.New(zapcore.InfoLevel)
	e.audit = auditLogs
	e.all = all
	opts := api.Options{
		Sessions: sessions, Keys: e.keys, Ready: st.Ping, Observer: m, Security: m, Logger: log,
		MaxUploadBytes: o.maxUpload, RequestReadTimeout: o.readTimeout, MinUploadRate: o.minUploadRate,
		Identity: &api.Identity{
			Issuer: e.issuer, Keys: e.keys, KeyAdmin: auth.NewKeyAdmin(st), AllowList: allow, Admin: auth.NewAdmin(st, mk),
			Services:       []string{"streaming", "billing"},
			TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
			AddrLimiter:    auth.NewLimiter(auth.LimiterOptions{Burst: o.addrBurst, Interval: 3 * time.Second, Now: clock.Now}),
			KeyLimiter:     auth.NewLimiter(auth.LimiterOptions{Burst: o.keyBurst, Interval: 6 * time.Second, Now: clock.Now}),
			Audit:          zap.New(zapcore.NewTee(auditCore, core)),
		},
	}
	if o.scorer {
		e.scorer = &countingScorer{}
		opts.Singles = e.scorer
	}
	if o.singles != nil {
		opts.Singles = o.singles
	}
	if o.real {
		opts.Singles = api.SessionScorer{Sessions: sessions}
	}
	handler = api.New(opts)
	t.Cleanup(func() { e.checkNoSecretLogged(t) })
	return e
}

func (e *idEnv) newKey(t *testing.T, k auth.NewKey) string {
	t.Helper()
	issued, err := e.keys.Create(t.Context(), k)
	if err != nil {
		t.Fatal(err)
	}
	return issued.Key
}

// checkNoSecretLogged fails if any log entry holds a secret the env knows.
func (e *idEnv) checkNoSecretLogged(t *testing.T) {
	for _, entry := range e.all.All() {
		line := entry.Message
		for _, f := range entry.Context {
			line += " " + f.String
		}
		for _, s := range e.secrets {
			if s != "" && strings.Contains(line, s) {
				t.Errorf("a secret was logged: %q", entry.Message)
			}
		}
	}
}

// result is a decoded answer.
type result struct {
	status int
	body   map[string]any
	header http.Header
}

// send sends req and decodes its JSON answer.
func (e *idEnv) send(t *testing.T, req *http.Request) result {
	t.Helper()
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := result{status: resp.StatusCode, header: resp.Header}
	if len(raw) > 0 {
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type %q", req.Method, req.URL.Path, ct)
		}
		if err := json.Unmarshal(raw, &out.body); err != nil {
			t.Fatalf("%s %s: body %q is not a JSON object: %v", req.Method, req.URL.Path, raw, err)
		}
	}
	return out
}

func (e *idEnv) newRequest(t *testing.T, method, path string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, e.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func tokenPath(tenant string) string {
	return "/auth/realms/" + tenant + "/protocol/openid-connect/token"
}

// tokenRequest is a form POST to a realm's token endpoint.
func (e *idEnv) tokenRequest(t *testing.T, tenant string, form url.Values) *http.Request {
	req := e.newRequest(t, "POST", tokenPath(tenant), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

func clientForm(id, secret string, kv ...string) url.Values {
	f := url.Values{"grant_type": {"client_credentials"}, "scope": {"roles"}, "client_id": {id}, "client_secret": {secret}}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "" {
			f.Del(kv[i])
		} else {
			f.Set(kv[i], kv[i+1])
		}
	}
	return f
}

// token obtains a token response from tenant's realm.
func (e *idEnv) token(t *testing.T, tenant string, form url.Values) map[string]any {
	t.Helper()
	res := e.send(t, e.tokenRequest(t, tenant, form))
	if res.status != http.StatusOK {
		t.Fatalf("token request = %d %v", res.status, res.body)
	}
	return res.body
}

// accessToken obtains an access token of the bootstrap client.
func (e *idEnv) accessToken(t *testing.T) string {
	return e.token(t, "default", clientForm(e.creds.OAuthClientID, e.creds.OAuthClientSecret))["access_token"].(string)
}

// singlesRequest is a POST /api/public/singles.
func (e *idEnv) singlesRequest(t *testing.T, tenant, token string, body []byte, contentType string) *http.Request {
	req := e.newRequest(t, "POST", "/api/public/singles", bytes.NewReader(body))
	if tenant != "" {
		req.Header.Set("x-service-tenant-id", tenant)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req
}

// form builds a multipart body: fields in order, then the audio part if
// audio is not nil.
func form(t *testing.T, audio []byte, fields ...string) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for i := 0; i < len(fields); i += 2 {
		if err := mw.WriteField(fields[i], fields[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if audio != nil {
		w, err := mw.CreateFormFile("audio", "call.wav")
		if err != nil {
			t.Fatal(err)
		}
		w.Write(audio)
	}
	mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

// testWAV returns seconds of a 440 Hz tone as a WAV file.
func testWAV(t *testing.T, f codec.Format, seconds float64) []byte {
	t.Helper()
	frames := int(seconds * float64(f.SampleRate))
	samples := make([]int16, frames*f.Channels)
	for i := range frames {
		v := int16(8000 * math.Sin(2*math.Pi*440*float64(i)/float64(f.SampleRate)))
		for c := range f.Channels {
			samples[i*f.Channels+c] = v
		}
	}
	var b bytes.Buffer
	if err := codec.WriteWAV(&b, f, samples); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var mono8k = codec.Format{Encoding: codec.L16, SampleRate: 8000, Channels: 1}

// countingScorer is a hand-written stand-in for the speaker models, which
// another change wires in: it reads the whole audio stream and answers
// with how much it read and a fixed, clearly fake credential and score.
// It lets these tests check the handler (multipart streaming, limits,
// errors, the {data: …} shape), not biometrics.
type countingScorer struct {
	mu    sync.Mutex
	calls []api.SingleRequest
}

func (f *countingScorer) Score(_ context.Context, tenantID string, req api.SingleRequest) (api.SingleResult, error) {
	f.mu.Lock()
	f.calls = append(f.calls, req)
	f.mu.Unlock()
	format := req.Audio.Format()
	var buf [4096]int16
	frames := 0
	for {
		n, err := req.Audio.Read(buf[:])
		frames += n / format.Channels
		if err == io.EOF {
			break
		}
		if err != nil {
			return api.SingleResult{}, err
		}
	}
	secs := float64(frames) / float64(format.SampleRate)
	res := api.SingleResult{Credential: "fake-credential-of-" + tenantID, Authenticity: 0.5, AudioSeconds: secs,
		VoiceAudioCollected: secs, ModelHash: req.ModelHash}
	if req.Credential != "" {
		score := 0.25
		res.Score, res.Decision = &score, "NO_MATCH"
	}
	return res, nil
}

// TestClientCredentialsEndToEnd is acceptance check 1: a standard OAuth
// client obtains a token and calls /api/public/singles with it; the token
// verifies against the JWKS by hand.
func TestClientCredentialsEndToEnd(t *testing.T) {
	for _, style := range []struct {
		name  string
		style oauth2.AuthStyle
	}{{"secret in form", oauth2.AuthStyleInParams}, {"secret in Basic header", oauth2.AuthStyleInHeader}} {
		t.Run(style.name, func(t *testing.T) {
			for _, withScorer := range []bool{false, true} {
				e := newIDEnv(t, idOptions{scorer: withScorer})
				cfg := clientcredentials.Config{
					ClientID: e.creds.OAuthClientID, ClientSecret: e.creds.OAuthClientSecret,
					TokenURL: e.srv.URL + tokenPath("default"), Scopes: []string{"roles"}, AuthStyle: style.style,
				}
				ctx := context.WithValue(t.Context(), oauth2.HTTPClient, e.srv.Client())
				tok, err := cfg.Token(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.EqualFold(tok.TokenType, "bearer") || tok.RefreshToken == "" || tok.Extra("scope") != "roles" ||
					tok.Extra("refresh_expires_in") != 1800.0 || tok.Extra("not-before-policy") != 0.0 || tok.Extra("session_state") == "" ||
					time.Until(tok.Expiry) > 300*time.Second || time.Until(tok.Expiry) < 250*time.Second {
					t.Fatalf("token = %+v, scope %v", tok, tok.Extra("scope"))
				}
				checkJWTByHand(t, e, tok.AccessToken)

				client := cfg.Client(ctx)
				audio := testWAV(t, mono8k, 1.5)
				for _, credential := range []string{"", "fake-credential-of-default"} {
					fields := []string{}
					if credential != "" {
						fields = []string{"credential", credential}
					}
					body, ct := form(t, audio, fields...)
					req := e.singlesRequest(t, "default", "", body, ct)
					resp, err := client.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					var out map[string]any
					json.NewDecoder(resp.Body).Decode(&out)
					resp.Body.Close()
					if !withScorer {
						// No speaker models are wired: the request is
						// accepted and validated, then refused honestly.
						if resp.StatusCode != http.StatusServiceUnavailable || out["code"] != "Unavailable" {
							t.Fatalf("singles without a scorer = %d %v", resp.StatusCode, out)
						}
						continue
					}
					data, _ := out["data"].(map[string]any)
					if resp.StatusCode != http.StatusOK || data["credential"] != "fake-credential-of-default" ||
						data["audio_seconds"] != 1.5 || data["model_hash"] != e.model {
						t.Fatalf("singles = %d %v", resp.StatusCode, out)
					}
					_, hasScore := data["score"]
					if hasScore != (credential != "") || (credential != "" && data["decision"] != "NO_MATCH") {
						t.Fatalf("score and decision with credential %q: %v", credential, data)
					}
				}
			}
		})
	}
}

// checkJWTByHand verifies an access token against the realm's JWKS with
// crypto/rsa, independently of the JWT library the server uses, and
// checks its claims.
func checkJWTByHand(t *testing.T, e *idEnv, token string) {
	t.Helper()
	res := e.send(t, e.newRequest(t, "GET", "/auth/realms/default/protocol/openid-connect/certs", nil))
	keys, _ := res.body["keys"].([]any)
	if res.status != 200 || len(keys) == 0 {
		t.Fatalf("JWKS = %d %v", res.status, res.body)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	var header, claims map[string]any
	decodePart(t, parts[0], &header)
	decodePart(t, parts[1], &claims)
	if header["alg"] != "RS256" || header["typ"] != "JWT" {
		t.Fatalf("header %v", header)
	}
	var jwk map[string]any
	for _, k := range keys {
		if m := k.(map[string]any); m["kid"] == header["kid"] {
			jwk = m
		}
	}
	if jwk == nil || jwk["kty"] != "RSA" || jwk["alg"] != "RS256" || jwk["use"] != "sig" {
		t.Fatalf("no RS256 signing key %v in %v", header["kid"], keys)
	}
	n, err1 := base64.RawURLEncoding.DecodeString(jwk["n"].(string))
	ex, err2 := base64.RawURLEncoding.DecodeString(jwk["e"].(string))
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatal("JWKS or signature is not base64url")
	}
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(ex).Int64())}
	if pub.N.BitLen() < 2048 {
		t.Fatalf("RSA key of %d bits", pub.N.BitLen())
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig); err != nil {
		t.Fatalf("signature does not verify against the JWKS: %v", err)
	}
	iss := e.srv.URL + "/auth/realms/default"
	exp, _ := claims["exp"].(float64)
	iat, _ := claims["iat"].(float64)
	if claims["iss"] != iss || claims["sub"] != e.creds.OAuthClientID || claims["azp"] != e.creds.OAuthClientID ||
		claims["tenant"] != "default" || claims["scope"] != "roles" || claims["jti"] == "" || exp-iat != 300 {
		t.Fatalf("claims %v", claims)
	}
	disc := e.send(t, e.newRequest(t, "GET", "/auth/realms/default/.well-known/openid-configuration", nil))
	if disc.status != 200 || disc.body["issuer"] != iss || disc.body["jwks_uri"] != iss+"/protocol/openid-connect/certs" ||
		disc.body["token_endpoint"] != iss+"/protocol/openid-connect/token" {
		t.Fatalf("discovery = %d %v", disc.status, disc.body)
	}
}

func decodePart(t *testing.T, part string, v any) {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}

func TestRefreshOnceAndExpiry(t *testing.T) {
	e := newIDEnv(t, idOptions{scorer: true})
	first := e.token(t, "default", clientForm(e.creds.OAuthClientID, e.creds.OAuthClientSecret))
	refresh := func(token string) result {
		return e.send(t, e.tokenRequest(t, "default", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token},
			"client_id": {e.creds.OAuthClientID}, "client_secret": {e.creds.OAuthClientSecret}}))
	}
	second := refresh(first["refresh_token"].(string))
	if second.status != 200 || second.body["refresh_token"] == first["refresh_token"] ||
		second.body["session_state"] != first["session_state"] || second.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("refresh = %d %v", second.status, second.body)
	}
	again := refresh(first["refresh_token"].(string))
	if again.status != 400 || again.body["error"] != "invalid_grant" || again.body["detail"] == "" {
		t.Fatalf("reused refresh token = %d %v", again.status, again.body)
	}
	// The reuse revoked the chain: the second token no longer refreshes.
	if r := refresh(second.body["refresh_token"].(string)); r.status != 400 || r.body["error"] != "invalid_grant" {
		t.Fatalf("refresh after a reuse = %d %v", r.status, r.body)
	}

	// The reuse revoked the chain's access tokens too, the first and the
	// second alike.
	body, ct := form(t, testWAV(t, mono8k, 0.5))
	for _, access := range []string{first["access_token"].(string), second.body["access_token"].(string)} {
		if r := e.send(t, e.singlesRequest(t, "default", access, body, ct)); r.status != 401 || r.body["code"] != "InvalidCredentials" {
			t.Fatalf("access token of a revoked chain = %d %v", r.status, r.body)
		}
	}

	// An access token of another chain works until it expires, then
	// answers 401.
	access := e.accessToken(t)
	if r := e.send(t, e.singlesRequest(t, "default", access, body, ct)); r.status != 200 {
		t.Fatalf("fresh token = %d %v", r.status, r.body)
	}
	e.clock.Advance(auth.AccessTokenTTL + auth.ClockSkew + time.Second)
	r := e.send(t, e.singlesRequest(t, "default", access, body, ct))
	if r.status != 401 || r.body["code"] != "InvalidCredentials" || !strings.Contains(r.body["message"].(string), "expired") ||
		!strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("expired token = %d %v %v", r.status, r.body, r.header)
	}
	if n := testutil.ToFloat64(metricVec(t, e.reg, "earshot_auth_failures_total", "interface", "tenant", "reason", "expired")); n != 1 {
		t.Errorf("expired-token failures counted %v, want 1", n)
	}
	if n := testutil.ToFloat64(metricVec(t, e.reg, "earshot_oauth_token_requests_total", "grant", "refresh_token", "outcome", "invalid_grant")); n != 2 {
		t.Errorf("invalid_grant refreshes counted %v, want 2", n)
	}
}

// metricVec returns the one series of a gathered counter with the given
// label values, as a collector testutil can read.
func metricVec(t *testing.T, reg *prometheus.Registry, name string, labels ...string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			for i := 0; i < len(labels); i += 2 {
				if got[labels[i]] != labels[i+1] {
					continue series
				}
			}
			return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "x", Help: "x"}, m.GetCounter().GetValue)
		}
	}
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "x", Help: "x"}, func() float64 { return 0 })
}

func TestSigningKeyRotationKeepsTokensValid(t *testing.T) {
	e := newIDEnv(t, idOptions{scorer: true})
	before := e.accessToken(t)
	rot := e.send(t, e.mgmt(t, "POST", "/management/v1/signing_keys", "", e.creds.AdminToken, ""))
	if rot.status != 201 || rot.body["active"] != true {
		t.Fatalf("rotate = %d %v", rot.status, rot.body)
	}
	after := e.accessToken(t)
	var h1, h2 map[string]any
	decodePart(t, strings.Split(before, ".")[0], &h1)
	decodePart(t, strings.Split(after, ".")[0], &h2)
	if h1["kid"] == h2["kid"] || h2["kid"] != rot.body["kid"] {
		t.Fatalf("kids before %v, after %v, rotated %v", h1["kid"], h2["kid"], rot.body["kid"])
	}
	jwks := e.send(t, e.newRequest(t, "GET", "/auth/realms/default/protocol/openid-connect/certs", nil))
	if keys, _ := jwks.body["keys"].([]any); len(keys) != 2 {
		t.Fatalf("JWKS after rotation has %d keys, want 2", len(keys))
	}
	body, ct := form(t, testWAV(t, mono8k, 0.25))
	for _, tok := range []string{before, after} {
		if r := e.send(t, e.singlesRequest(t, "default", tok, body, ct)); r.status != 200 {
			t.Fatalf("token after rotation = %d %v", r.status, r.body)
		}
	}
	list := e.send(t, e.mgmt(t, "GET", "/management/v1/signing_keys", "", e.creds.AdminToken, ""))
	if items, _ := list.body["items"].([]any); len(items) != 2 {
		t.Fatalf("signing keys = %v", list.body)
	}
}
