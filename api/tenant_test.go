package api_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/earshot-voice/earshot/auth"
	"github.com/earshot-voice/earshot/codec"
)

// TestAttacks is acceptance check 2: attacks and bad inputs against the
// token endpoint, the tenant-scoped interface and the management
// interface, each with the status and error code it must get. Rows run in
// order against one server.
func TestAttacks(t *testing.T) {
	e := newIDEnv(t, idOptions{scorer: true, keyBurst: 5, maxUpload: 64 << 10})
	cid, csecret := e.creds.OAuthClientID, e.creds.OAuthClientSecret
	admin := e.creds.AdminToken

	// A token minted now expires before the rows run.
	expired := e.accessToken(t)
	e.clock.Advance(auth.AccessTokenTTL + auth.ClockSkew + time.Second)

	good := e.token(t, "default", clientForm(cid, csecret))
	token := good["access_token"].(string)
	other := e.token(t, "other", clientForm(e.otherClientID, e.otherClientSecret))
	otherToken := other["access_token"].(string)
	// A refresh token used once already, of a chain of its own: reusing it
	// revokes its chain, access tokens included.
	used := e.token(t, "default", clientForm(cid, csecret))["refresh_token"].(string)
	if r := e.send(t, e.tokenRequest(t, "default", refreshForm(cid, csecret, used))); r.status != 200 {
		t.Fatalf("first refresh = %d %v", r.status, r.body)
	}
	// Forgeries built from the real token.
	parts := strings.Split(token, ".")
	var payload map[string]any
	decodePart(t, parts[1], &payload)
	b64 := func(v any) string {
		j, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(j)
	}
	var header map[string]any
	decodePart(t, parts[0], &header)
	jwks := e.send(t, e.newRequest(t, "GET", "/auth/realms/default/protocol/openid-connect/certs", nil))
	pubN, _ := base64.RawURLEncoding.DecodeString(jwks.body["keys"].([]any)[0].(map[string]any)["n"].(string))
	hsInput := b64(map[string]any{"alg": "HS256", "typ": "JWT", "kid": header["kid"]}) + "." + parts[1]
	mac := hmac.New(sha256.New, pubN)
	mac.Write([]byte(hsInput))
	hs256 := hsInput + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	algNone := b64(map[string]any{"alg": "none", "typ": "JWT"}) + "." + parts[1] + "."
	payload["tenant"], payload["exp"] = "default", payload["exp"].(float64)+86400
	tampered := parts[0] + "." + b64(payload) + "." + parts[2]

	// A client whose secret is brute-forced up to the key limit.
	bf, bfSecret, _ := e.issuer.CreateClient(t.Context(), "default")
	e.secrets = append(e.secrets, bfSecret)
	for range 5 {
		e.send(t, e.tokenRequest(t, "default", clientForm(bf.ID, "esc_wrong")))
	}
	// A revoked OAuth client and its token.
	rc, rcSecret, _ := e.issuer.CreateClient(t.Context(), "default")
	e.secrets = append(e.secrets, rcSecret)
	rcToken := e.token(t, "default", clientForm(rc.ID, rcSecret))["access_token"].(string)
	if err := e.issuer.RevokeClient(t.Context(), rc.ID); err != nil {
		t.Fatal(err)
	}
	// A revoked API key.
	revoked := e.send(t, e.mgmt(t, "POST", "/management/v1/api_keys", e.creds.APIKey, "", `{"role":"admin"}`))
	revokedKey, revokedID := revoked.body["key"].(string), revoked.body["id"].(string)
	e.secrets = append(e.secrets, revokedKey)
	e.send(t, e.mgmt(t, "DELETE", "/management/v1/api_keys/"+revokedID, e.creds.APIKey, "", ""))
	// Keys and entries of service billing, for service isolation.
	bk := e.send(t, e.mgmt(t, "POST", "/management/v1/api_keys", e.billingKey, "", `{}`))
	billingKeyID := bk.body["id"].(string)
	e.secrets = append(e.secrets, bk.body["key"].(string))
	be := e.send(t, e.mgmt(t, "POST", "/management/v1/ip_allowlist", e.billingKey, "", `{"cidr":"192.0.2.0/24"}`))
	billingEntryID := be.body["id"].(string)
	// The caller's only loopback entry for streaming.
	var loopbackID string
	for id, it := range items(t, e.send(t, e.mgmt(t, "GET", "/management/v1/ip_allowlist", e.creds.APIKey, "", "")), "id") {
		if it["cidr"] == "127.0.0.0/8" {
			loopbackID = id
		}
	}
	ownKeyID := ""
	for id, it := range items(t, e.send(t, e.mgmt(t, "GET", "/management/v1/api_keys", e.creds.APIKey, "", "")), "id") {
		if it["name"] == "bootstrap" {
			ownKeyID = id
		}
	}

	wav := testWAV(t, mono8k, 0.5)
	singles := func(tenant, tok string, audio []byte, fields ...string) func() *http.Request {
		return func() *http.Request {
			body, ct := form(t, audio, fields...)
			return e.singlesRequest(t, tenant, tok, body, ct)
		}
	}
	singlesRaw := func(tenant, tok, contentType, body string) func() *http.Request {
		return func() *http.Request { return e.singlesRequest(t, tenant, tok, []byte(body), contentType) }
	}
	withAuth := func(scheme string) func() *http.Request {
		return func() *http.Request {
			req := singles("default", "", wav)()
			req.Header.Set("Authorization", scheme)
			return req
		}
	}
	tokenReq := func(tenant string, f url.Values) func() *http.Request {
		return func() *http.Request { return e.tokenRequest(t, tenant, f) }
	}
	mgmt := func(method, path, key, adminTok, body string, xff ...string) func() *http.Request {
		return func() *http.Request { return e.mgmt(t, method, path, key, adminTok, body, xff...) }
	}
	oversized := bytes.Repeat([]byte{1}, 70<<10)
	chunked := func() *http.Request {
		body, ct := form(t, testWAV(t, mono8k, 5)) // 80 KB of samples
		req := e.singlesRequest(t, "default", token, nil, ct)
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = -1 // sent chunked: only the stream tells its size
		return req
	}
	wav44 := testWAV(t, codec.Format{Encoding: codec.L16, SampleRate: 16000, Channels: 1}, 0.1)
	wav44[24], wav44[25], wav44[26] = 0x44, 0xAC, 0 // sample rate 44100
	truncated := wav[:len(wav)-1]

	tests := []struct {
		name   string
		req    func() *http.Request
		status int
		field  string // "code" (API errors) or "error" (OAuth errors)
		want   string
	}{
		// Token endpoint.
		{"wrong client secret", tokenReq("default", clientForm(cid, "esc_0000000000000000_"+strings.Repeat("A", 43))), 401, "error", "invalid_client"},
		{"unknown client", tokenReq("default", clientForm("nobody", csecret)), 401, "error", "invalid_client"},
		{"other tenant's client at this realm", tokenReq("default", clientForm(e.otherClientID, e.otherClientSecret)), 401, "error", "invalid_client"},
		{"unknown realm", tokenReq("nowhere", clientForm(cid, csecret)), 401, "error", "invalid_client"},
		{"revoked client", tokenReq("default", clientForm(rc.ID, rcSecret)), 401, "error", "invalid_client"},
		{"no client secret", tokenReq("default", clientForm(cid, "", "client_secret", "")), 401, "error", "invalid_client"},
		{"no grant_type", tokenReq("default", clientForm(cid, csecret, "grant_type", "")), 400, "error", "invalid_request"},
		{"password grant", tokenReq("default", clientForm(cid, csecret, "grant_type", "password")), 400, "error", "unsupported_grant_type"},
		{"no scope", tokenReq("default", clientForm(cid, csecret, "scope", "")), 400, "error", "invalid_scope"},
		{"scope beyond roles", tokenReq("default", clientForm(cid, csecret, "scope", "roles admin")), 400, "error", "invalid_scope"},
		{"repeated parameter", func() *http.Request {
			f := clientForm(cid, csecret)
			f.Add("scope", "roles")
			return e.tokenRequest(t, "default", f)
		}, 400, "error", "invalid_request"},
		{"JSON token request", func() *http.Request {
			req := e.newRequest(t, "POST", tokenPath("default"), strings.NewReader(`{"grant_type":"client_credentials"}`))
			req.Header.Set("Content-Type", "application/json")
			return req
		}, 400, "error", "invalid_request"},
		{"Basic and form secret together", func() *http.Request {
			req := e.tokenRequest(t, "default", clientForm(cid, csecret))
			req.SetBasicAuth(cid, csecret)
			return req
		}, 400, "error", "invalid_request"},
		{"malformed Basic credentials", func() *http.Request {
			req := e.tokenRequest(t, "default", clientForm("", "", "client_id", "", "client_secret", ""))
			req.Header.Set("Authorization", "Basic !!!")
			return req
		}, 401, "error", "invalid_client"},
		{"reused refresh token", tokenReq("default", refreshForm(cid, csecret, used)), 400, "error", "invalid_grant"},
		{"forged refresh token", tokenReq("default", refreshForm(cid, csecret, "esr_0000000000000000_"+strings.Repeat("A", 43))), 400, "error", "invalid_grant"},
		{"other client's refresh token", tokenReq("default", refreshForm(cid, csecret, other["refresh_token"].(string))), 400, "error", "invalid_grant"},
		{"refresh without refresh_token", tokenReq("default", refreshForm(cid, csecret, "")), 400, "error", "invalid_request"},
		{"brute force hits the limit (right secret refused)", tokenReq("default", clientForm(bf.ID, bfSecret)), 429, "code", "RateLimited"},

		// Tenant-scoped interface.
		{"no tenant header", singles("", token, wav), 401, "code", "InvalidCredentials"},
		{"no Authorization header", singles("default", "", wav), 401, "code", "InvalidCredentials"},
		{"Basic instead of Bearer", withAuth("Basic " + base64.StdEncoding.EncodeToString([]byte(cid+":"+csecret))), 401, "code", "InvalidCredentials"},
		{"other tenant's token, this tenant's header", singles("default", otherToken, wav), 401, "code", "InvalidCredentials"},
		{"this tenant's token, other tenant's header", singles("other", token, wav), 401, "code", "InvalidCredentials"},
		{"alg none", singles("default", algNone, wav), 401, "code", "InvalidCredentials"},
		{"HS256 signed with the public key", singles("default", hs256, wav), 401, "code", "InvalidCredentials"},
		{"tampered payload", singles("default", tampered, wav), 401, "code", "InvalidCredentials"},
		{"expired token", singles("default", expired, wav), 401, "code", "InvalidCredentials"},
		{"garbage token", singles("default", "not.a.jwt", wav), 401, "code", "InvalidCredentials"},
		{"admin token as bearer", singles("default", admin, wav), 401, "code", "InvalidCredentials"},
		{"API key as bearer", singles("default", e.creds.APIKey, wav), 401, "code", "InvalidCredentials"},
		{"token of a revoked client", singles("default", rcToken, wav), 401, "code", "InvalidCredentials"},
		{"JSON instead of form-data", singlesRaw("default", token, "application/json", `{"audio":"x"}`), 415, "code", "UnsupportedMediaType"},
		{"urlencoded form", singlesRaw("default", token, "application/x-www-form-urlencoded", "audio=x"), 415, "code", "UnsupportedMediaType"},
		{"no content type", singlesRaw("default", token, "", "x"), 415, "code", "UnsupportedMediaType"},
		{"form-data without boundary", singlesRaw("default", token, "multipart/form-data", "x"), 400, "code", "ValidationFailed"},
		{"malformed multipart body", singlesRaw("default", token, "multipart/form-data; boundary=xyz", "--xyz\r\nbroken"), 400, "code", "ValidationFailed"},
		{"oversized upload", singles("default", token, oversized), 413, "code", "PayloadTooLarge"},
		{"oversized chunked upload", chunked, 413, "code", "PayloadTooLarge"},
		{"non-audio upload", singles("default", token, []byte("%PDF-1.7 not a recording")), 422, "code", "ValidationFailed"},
		{"WAV at 44.1 kHz", singles("default", token, wav44), 422, "code", "ValidationFailed"},
		{"WAV cut inside a sample", singles("default", token, truncated), 422, "code", "ValidationFailed"},
		{"no audio part", singles("default", token, nil, "model_hash", e.model), 422, "code", "ValidationFailed"},
		{"unknown model", singles("default", token, wav, "model_hash", "abc"), 422, "code", "ValidationFailed"},
		{"unknown channel", singles("default", token, wav, "channel", "left"), 422, "code", "ValidationFailed"},
		{"internal leg of a mono file", singles("default", token, wav, "channel", "internal"), 422, "code", "ValidationFailed"},
		{"credential with markup", singles("default", token, wav, "credential", "<script>"), 422, "code", "ValidationFailed"},
		{"field after the audio", func() *http.Request {
			body, ct := formAudioFirst(t, wav, "model_hash", e.model)
			return e.singlesRequest(t, "default", token, body, ct)
		}, 422, "code", "ValidationFailed"},

		// Management interface.
		{"no credentials", mgmt("GET", "/management/v1/api_keys", "", "", ""), 401, "code", "InvalidCredentials"},
		{"wrong API key", mgmt("GET", "/management/v1/api_keys", e.creds.APIKey[:len(e.creds.APIKey)-2]+"xx", "", ""), 401, "code", "InvalidCredentials"},
		{"revoked API key", mgmt("GET", "/management/v1/api_keys", revokedKey, "", ""), 401, "code", "InvalidCredentials"},
		{"forged admin token", mgmt("GET", "/management/v1/tenants", "", "est_0000000000000000_"+strings.Repeat("A", 43), ""), 401, "code", "InvalidCredentials"},
		{"API key and admin token together", mgmt("GET", "/management/v1/api_keys", e.creds.APIKey, admin, ""), 401, "code", "InvalidCredentials"},
		{"key of role user", mgmt("GET", "/management/v1/api_keys", e.userKey, "", ""), 403, "code", "Forbidden"},
		{"service A lists service B's keys", mgmt("GET", "/management/v1/api_keys?service=billing", e.creds.APIKey, "", ""), 403, "code", "Forbidden"},
		{"service A creates a key of service B", mgmt("POST", "/management/v1/api_keys", e.creds.APIKey, "", `{"service":"billing"}`), 403, "code", "Forbidden"},
		{"service A revokes service B's key", mgmt("DELETE", "/management/v1/api_keys/"+billingKeyID, e.creds.APIKey, "", ""), 403, "code", "Forbidden"},
		{"service A lists service B's allow list", mgmt("GET", "/management/v1/ip_allowlist?service=billing", e.creds.APIKey, "", ""), 403, "code", "Forbidden"},
		{"service A adds to service B's allow list", mgmt("POST", "/management/v1/ip_allowlist", e.creds.APIKey, "", `{"cidr":"10.0.0.0/8","service":"billing"}`), 403, "code", "Forbidden"},
		{"service A deletes service B's entry", mgmt("DELETE", "/management/v1/ip_allowlist/"+billingEntryID, e.creds.APIKey, "", ""), 403, "code", "Forbidden"},
		{"tenant A's key names tenant B", mgmt("GET", "/management/v1/api_keys?tenant_id=other", e.creds.APIKey, "", ""), 403, "code", "Forbidden"},
		{"tenant B's key revokes tenant A's key", mgmt("DELETE", "/management/v1/api_keys/"+ownKeyID, e.otherKey, "", ""), 404, "code", "NotFound"},
		{"request from an address not allow-listed", mgmt("GET", "/management/v1/api_keys", e.creds.APIKey, "", "", "203.0.113.9"), 403, "code", "IPNotAllowed"},
		{"admin token from an address not allow-listed", mgmt("GET", "/management/v1/tenants", "", admin, "", "2001:db8::9"), 403, "code", "IPNotAllowed"},
		{"spoofed X-Forwarded-For chain", mgmt("GET", "/management/v1/api_keys", e.creds.APIKey, "", "", "127.0.0.1, 203.0.113.9"), 403, "code", "IPNotAllowed"},
		{"malformed X-Forwarded-For", mgmt("GET", "/management/v1/api_keys", e.creds.APIKey, "", "", "localhost"), 403, "code", "IPNotAllowed"},
		{"lock-out: delete the caller's only entry", mgmt("DELETE", "/management/v1/ip_allowlist/"+loopbackID, e.creds.APIKey, "", ""), 409, "code", "Conflict"},
		{"lock-out: a key revokes itself", mgmt("DELETE", "/management/v1/api_keys/"+ownKeyID, e.creds.APIKey, "", ""), 409, "code", "Conflict"},
		{"API key on OAuth clients", mgmt("GET", "/management/v1/oauth_clients", e.creds.APIKey, "", ""), 403, "code", "Forbidden"},
		{"API key rotates the admin token", mgmt("POST", "/management/v1/admin/token", e.creds.APIKey, "", `{"password":"x"}`), 403, "code", "Forbidden"},
		{"invalid CIDR", mgmt("POST", "/management/v1/ip_allowlist", e.creds.APIKey, "", `{"cidr":"10.0.0.0/33"}`), 422, "code", "ValidationFailed"},
		{"CIDR with a zone", mgmt("POST", "/management/v1/ip_allowlist", e.creds.APIKey, "", `{"cidr":"fe80::1%eth0"}`), 422, "code", "ValidationFailed"},
		{"duplicate CIDR", mgmt("POST", "/management/v1/ip_allowlist", e.creds.APIKey, "", `{"cidr":"127.0.0.0/8"}`), 409, "code", "Conflict"},
		{"unknown service", mgmt("POST", "/management/v1/api_keys", "", admin, `{"service":"mail"}`), 422, "code", "ValidationFailed"},
		{"unknown role", mgmt("POST", "/management/v1/api_keys", e.creds.APIKey, "", `{"role":"root"}`), 422, "code", "ValidationFailed"},
		{"text body", func() *http.Request {
			req := e.mgmt(t, "POST", "/management/v1/api_keys", e.creds.APIKey, "", "role=admin")
			req.Header.Set("Content-Type", "text/plain")
			return req
		}, 415, "code", "UnsupportedMediaType"},
		{"wrong admin password", mgmt("POST", "/management/v1/admin/token", "", admin, `{"password":"guess"}`), 401, "code", "InvalidCredentials"},
		{"weak new admin password", mgmt("PUT", "/management/v1/admin/password", "", admin, `{"current_password":"x","new_password":"short"}`), 422, "code", "ValidationFailed"},
		{"invalid tenant id", mgmt("POST", "/management/v1/tenants", "", admin, `{"id":"../etc"}`), 422, "code", "ValidationFailed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.send(t, tt.req())
			if r.status != tt.status || r.body[tt.field] != tt.want {
				t.Fatalf("= %d %v, want %d %s %s", r.status, r.body, tt.status, tt.field, tt.want)
			}
			if tt.field == "error" && r.body["detail"] == "" {
				t.Errorf("OAuth error without detail: %v", r.body)
			}
			if tt.field == "code" {
				if msg, _ := r.body["message"].(string); msg == "" {
					t.Errorf("error without message: %v", r.body)
				}
			}
			if tt.status == 429 && r.header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
		})
	}
	if len(tests) < 40 {
		t.Fatalf("only %d attack rows", len(tests))
	}
	t.Logf("%d attack and bad-input rows", len(tests))
	// Nothing above changed what the caller may do.
	if r := e.send(t, e.mgmt(t, "GET", "/management/v1/api_keys", e.creds.APIKey, "", "")); r.status != 200 {
		t.Fatalf("bootstrap key after the attacks = %d %v", r.status, r.body)
	}
}

func refreshForm(id, secret, refreshToken string) url.Values {
	f := url.Values{"grant_type": {"refresh_token"}, "client_id": {id}, "client_secret": {secret}}
	if refreshToken != "" {
		f.Set("refresh_token", refreshToken)
	}
	return f
}

// formAudioFirst builds a multipart body with the audio part before the
// fields.
func formAudioFirst(t *testing.T, audio []byte, fields ...string) ([]byte, string) {
	t.Helper()
	body, ct := form(t, audio)
	_, boundary, _ := strings.Cut(ct, "boundary=")
	closing := "--" + boundary + "--\r\n"
	var b strings.Builder
	b.Write(bytes.TrimSuffix(body, []byte(closing)))
	for i := 0; i < len(fields); i += 2 {
		b.WriteString("--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + fields[i] + "\"\r\n\r\n" + fields[i+1] + "\r\n")
	}
	b.WriteString(closing)
	return []byte(b.String()), ct
}

func TestBruteForceLimits(t *testing.T) {
	e := newIDEnv(t, idOptions{addrBurst: 4, keyBurst: 1000, scorer: true})
	key := e.creds.APIKey
	wrong := key[:len(key)-2] + "xx"
	if wrong == key {
		wrong = key[:len(key)-2] + "yy"
	}
	stream := func(k, xff string) result {
		req := e.newRequest(t, "GET", "/v1/audio_settings/8b0e5a0e-3c2f-4d0a-9c67-6f0f1f0c2b7a", nil)
		req.Header.Set("apikey", k)
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		return e.send(t, req)
	}
	for i := range 4 {
		if r := stream(wrong, "198.51.100.1"); r.status != 401 {
			t.Fatalf("failure %d = %d", i, r.status)
		}
	}
	r := stream(key, "198.51.100.1")
	if r.status != 429 || r.body["code"] != "RateLimited" || r.header.Get("Retry-After") != "3" {
		t.Fatalf("right key from a limited address = %d %v Retry-After %q", r.status, r.body, r.header.Get("Retry-After"))
	}
	// Other addresses, and other interfaces from the limited address, are
	// judged on their own address.
	if r := stream(key, "198.51.100.2"); r.status != 404 {
		t.Fatalf("another address = %d %v", r.status, r.body)
	}
	body, ct := form(t, testWAV(t, mono8k, 0.25))
	req := e.singlesRequest(t, "default", "garbage", body, ct)
	req.Header.Set("X-Forwarded-For", "198.51.100.1")
	if r := e.send(t, req); r.status != 429 {
		t.Fatalf("tenant interface from the limited address = %d %v", r.status, r.body)
	}
	// The limit lifts with time.
	e.clock.Advance(3 * time.Second)
	if r := stream(key, "198.51.100.1"); r.status != 404 {
		t.Fatalf("after Retry-After = %d %v", r.status, r.body)
	}
	// IPv6 clients are limited per /64.
	for range 4 {
		stream(wrong, "2001:db8:1:2::1")
	}
	if r := stream(key, "2001:db8:1:2:ffff::7"); r.status != 429 {
		t.Fatalf("another address of the same /64 = %d", r.status)
	}
	if n := testutilValue(t, e, "earshot_auth_failures_total", "interface", "streaming", "reason", "rate_limited"); n != 2 {
		t.Errorf("rate-limited streaming requests counted %v, want 2", n)
	}
}

func testutilValue(t *testing.T, e *idEnv, name string, labels ...string) float64 {
	t.Helper()
	return testutil.ToFloat64(metricVec(t, e.reg, name, labels...))
}
