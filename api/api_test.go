package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/earshot-voice/earshot/api"
	"github.com/earshot-voice/earshot/auth"
	"github.com/earshot-voice/earshot/metrics"
	"github.com/earshot-voice/earshot/session"
	"github.com/earshot-voice/earshot/store"
	"github.com/earshot-voice/earshot/voiceprint"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env is a running API over a fresh SQLite store, with the bootstrap key
// of tenant "default", a key of tenant "other", and a key of another
// service.
type env struct {
	srv      *httptest.Server
	handler  *api.Server
	key      string // tenant default, streaming, admin
	otherKey string // tenant other, streaming
	mgmtKey  string // tenant default, service "management"
	model    string
	sealer   *voiceprint.Sealer
}

// credential enrols synthetic feature vectors (enough voice for the
// model) and seals the template for tenant: a real credential of this
// server, made without audio.
func (e *env) credential(tb testing.TB, tenant string) string {
	tb.Helper()
	model, _ := voiceprint.NewRegistry().Lookup(e.model)
	enr := model.NewEnroller()
	rng := rand.New(rand.NewPCG(7, 8))
	vec := make([]float32, model.Dim)
	for range int(model.MinVoiceSeconds*100) + 200 {
		for i := range vec {
			vec[i] = float32(rng.NormFloat64())
		}
		if err := enr.Add(vec); err != nil {
			tb.Fatal(err)
		}
	}
	tmpl, err := enr.Template()
	if err != nil {
		tb.Fatal(err)
	}
	cred, err := e.sealer.Seal(tenant, tmpl)
	if err != nil {
		tb.Fatal(err)
	}
	return cred
}

// bootstrapped opens a fresh SQLite store with a new master key and runs
// the first-start bootstrap on it, logging to log.
func bootstrapped(tb testing.TB, log *zap.Logger) (*store.Store, auth.MasterKey, *auth.Credentials) {
	tb.Helper()
	st, err := store.Open(tb.Context(), "", tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	mk, _, err := auth.LoadOrCreateMasterKey("", tb.TempDir()+"/master.key")
	if err != nil {
		tb.Fatal(err)
	}
	creds, err := auth.Bootstrap(tb.Context(), st, mk, log)
	if err != nil {
		tb.Fatal(err)
	}
	return st, mk, creds
}

func newEnv(tb testing.TB, log *zap.Logger) *env {
	tb.Helper()
	ctx := tb.Context()
	st, mk, creds := bootstrapped(tb, log)
	keys := auth.NewKeys(st, mk)
	if err := st.CreateTenant(ctx, auth.Tenant{ID: "other", CreatedAt: time.Now()}); err != nil {
		tb.Fatal(err)
	}
	other, err := keys.Create(ctx, auth.NewKey{TenantID: "other"})
	if err != nil {
		tb.Fatal(err)
	}
	mgmt, err := keys.Create(ctx, auth.NewKey{TenantID: "default", Service: "management"})
	if err != nil {
		tb.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, metrics.Build{Version: "test"})
	sealer, err := voiceprint.NewSealerAEAD(mk.NewAEAD("credential seal v1"))
	if err != nil {
		tb.Fatal(err)
	}
	sessions := session.NewManager(st, voiceprint.NewRegistry(), session.Options{MaxAudioTotalDuration: 120, Observer: m,
		Sealer: sealer}, log)
	tb.Cleanup(sessions.Close)
	h := api.New(api.Options{
		Sessions:     sessions,
		Keys:         keys,
		Ready:        st.Ping,
		Metrics:      promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
		Observer:     m,
		MaxBodyBytes: 4 << 10,
		Logger:       log,
	})
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return &env{srv: srv, handler: h, key: creds.APIKey, otherKey: other.Key, mgmtKey: mgmt.Key,
		model: sessions.Models()[0].Hash, sealer: sealer}
}

// do sends a request and decodes a JSON answer into a map (nil for an
// empty body). body may be a string (sent as is) or any value (encoded).
func (e *env) do(t *testing.T, method, path, key, contentType string, body any) (int, map[string]any, http.Header) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(enc)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, e.srv.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("apikey", key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("X-Request-Id") == "" {
		t.Errorf("%s %s: no X-Request-Id", method, path)
	}
	if len(raw) == 0 {
		return resp.StatusCode, nil, resp.Header
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" && path != "/metrics" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	var out map[string]any
	if path != "/metrics" {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: body %q is not a JSON object: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode, out, resp.Header
}

const jsonType = "application/json"

func settingsBody() map[string]any {
	return map[string]any{"audio_protocol": "audiohook", "audio_format": "raw", "audio_codec": "mulaw",
		"sample_format": "", "sample_rate": 8000, "channels": 1}
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == deleteField {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

// deleteField removes a field in with.
var deleteField = &struct{}{}

func TestStreamingControlPlane(t *testing.T) {
	e := newEnv(t, zaptest.NewLogger(t))

	for _, path := range []string{"/alive", "/v1/alive", "/ready"} {
		if code, body, _ := e.do(t, "GET", path, "", "", nil); code != http.StatusNoContent || body != nil {
			t.Errorf("GET %s = %d %v, want 204 and no body", path, code, body)
		}
	}

	code, models, _ := e.do(t, "GET", "/v1/models", e.key, "", nil)
	items, _ := models["items"].([]any)
	if code != 200 || len(items) == 0 {
		t.Fatalf("GET /v1/models = %d %v", code, models)
	}
	first := items[0].(map[string]any)
	for _, f := range []string{"hash", "name", "sample_rates", "default_similarity_threshold", "description"} {
		if _, ok := first[f]; !ok {
			t.Errorf("model lacks %s", f)
		}
	}

	// Unknown fields are ignored (spec section 9).
	code, as, _ := e.do(t, "POST", "/v1/audio_settings", e.key, "application/json; charset=utf-8",
		with(settingsBody(), "future_field", true))
	if code != http.StatusCreated {
		t.Fatalf("POST /v1/audio_settings = %d %v", code, as)
	}
	want := map[string]any{"audio_protocol": "audiohook", "audio_format": "raw", "audio_codec": "mulaw",
		"sample_format": "", "sample_rate": 8000.0, "channels": 1.0, "channel": "external"}
	for k, v := range want {
		if as[k] != v {
			t.Errorf("audio settings %s = %v, want %v", k, as[k], v)
		}
	}
	asID := as["id"].(string)
	checkHTTPDate(t, as["created_at"])
	if code, got, _ := e.do(t, "GET", "/v1/audio_settings/"+asID, e.key, "", nil); code != 200 || got["id"] != asID || got["created_at"] != as["created_at"] {
		t.Errorf("GET audio settings = %d %v", code, got)
	}

	sessionBody := map[string]any{"audio_settings_id": asID, "authenticity_threshold": 0.8,
		"audio_total_duration": 30, "call_id": "call-1", "model_hash": e.model}
	code, rs, _ := e.do(t, "POST", "/v1/register_session", e.key, jsonType, sessionBody)
	if code != http.StatusCreated || rs["state"] != "PROCESSING_AUDIO" {
		t.Fatalf("POST /v1/register_session = %d %v", code, rs)
	}
	for k, v := range sessionBody {
		if fmt.Sprint(rs[k]) != fmt.Sprint(v) {
			t.Errorf("session %s = %v, want %v", k, rs[k], v)
		}
	}
	if _, ok := rs["result"]; ok {
		t.Error("result present before any audio was processed")
	}
	checkHTTPDate(t, rs["created_at"])
	rsID := rs["id"].(string)
	if code, got, _ := e.do(t, "GET", "/v1/register_session/"+rsID, e.key, "", nil); code != 200 || got["state"] != "PROCESSING_AUDIO" {
		t.Errorf("GET session = %d %v", code, got)
	}
	if code, _, _ := e.do(t, "DELETE", "/v1/register_session/"+rsID, e.key, "", nil); code != http.StatusNoContent {
		t.Errorf("DELETE session = %d", code)
	}
	code, got, _ := e.do(t, "GET", "/v1/register_session/"+rsID, e.key, "", nil)
	errObj, _ := got["error"].(map[string]any)
	if code != 200 || got["state"] != "FAILED" || errObj["code"] != "Cancelled" || errObj["message"] == "" {
		t.Errorf("GET cancelled session = %d %v", code, got)
	}
	// The call is free again after the cancel.
	if code, _, _ := e.do(t, "POST", "/v1/register_session", e.key, jsonType, sessionBody); code != http.StatusCreated {
		t.Errorf("new session after cancel = %d", code)
	}

	code, _, _ = e.do(t, "GET", "/metrics", "", "", nil)
	if code != 200 {
		t.Errorf("GET /metrics = %d", code)
	}
}

func checkHTTPDate(t *testing.T, v any) {
	t.Helper()
	s, _ := v.(string)
	ts, err := http.ParseTime(s)
	if err != nil || !strings.HasSuffix(s, " GMT") || time.Since(ts) > time.Minute {
		t.Errorf("created_at %q is not a recent HTTP-date: %v", s, err)
	}
}

func TestBadInputs(t *testing.T) {
	e := newEnv(t, zaptest.NewLogger(t))
	_, as, _ := e.do(t, "POST", "/v1/audio_settings", e.key, jsonType, settingsBody())
	asID := as["id"].(string)
	_, otherAS, _ := e.do(t, "POST", "/v1/audio_settings", e.otherKey, jsonType, settingsBody())
	otherASID := otherAS["id"].(string)
	sess := map[string]any{"audio_settings_id": asID, "authenticity_threshold": 0.8,
		"audio_total_duration": 30, "call_id": "live-call", "model_hash": e.model}
	_, live, _ := e.do(t, "POST", "/v1/register_session", e.key, jsonType, sess)
	liveID := live["id"].(string)
	_, cancelled, _ := e.do(t, "POST", "/v1/register_session", e.key, jsonType, with(sess, "call_id", "gone"))
	cancelledID := cancelled["id"].(string)
	e.do(t, "DELETE", "/v1/register_session/"+cancelledID, e.key, "", nil)
	_, otherSess, _ := e.do(t, "POST", "/v1/register_session", e.otherKey, jsonType, with(sess, "audio_settings_id", otherASID))
	otherSessID := otherSess["id"].(string)
	unknownID := "8b0e5a0e-3c2f-4d0a-9c67-6f0f1f0c2b7a"

	tests := []struct {
		name, method, path, key, contentType string
		body                                 any
		status                               int
		code                                 string
		field                                string // the field an error must name, if any
	}{
		{"no apikey", "GET", "/v1/models", "", "", nil, 401, "InvalidCredentials", ""},
		{"wrong apikey", "GET", "/v1/models", e.key[:len(e.key)-2] + "xx", "", nil, 401, "InvalidCredentials", ""},
		{"malformed apikey", "GET", "/v1/models", "hello", "", nil, 401, "InvalidCredentials", ""},
		{"apikey of another service", "GET", "/v1/models", e.mgmtKey, "", nil, 403, "Forbidden", ""},
		{"no apikey on create", "POST", "/v1/audio_settings", "", jsonType, settingsBody(), 401, "InvalidCredentials", ""},
		{"text content type", "POST", "/v1/audio_settings", e.key, "text/plain", settingsBody(), 415, "UnsupportedMediaType", ""},
		{"no content type", "POST", "/v1/audio_settings", e.key, "", settingsBody(), 415, "UnsupportedMediaType", ""},
		{"form content type", "POST", "/v1/register_session", e.key, "application/x-www-form-urlencoded", "a=b", 415, "UnsupportedMediaType", ""},
		{"bad JSON", "POST", "/v1/audio_settings", e.key, jsonType, `{"audio_protocol":`, 400, "ValidationFailed", ""},
		{"JSON array", "POST", "/v1/audio_settings", e.key, jsonType, `[1,2]`, 400, "ValidationFailed", ""},
		{"JSON null", "POST", "/v1/audio_settings", e.key, jsonType, `null`, 400, "ValidationFailed", ""},
		{"trailing data", "POST", "/v1/audio_settings", e.key, jsonType, `{} {}`, 400, "ValidationFailed", ""},
		{"empty body", "POST", "/v1/audio_settings", e.key, jsonType, ``, 400, "ValidationFailed", ""},
		{"oversized body", "POST", "/v1/audio_settings", e.key, jsonType, `{"x":"` + strings.Repeat("a", 5000) + `"}`, 413, "PayloadTooLarge", ""},
		{"missing codec", "POST", "/v1/audio_settings", e.key, jsonType, with(settingsBody(), "audio_codec", deleteField), 422, "ValidationFailed", "audio_codec"},
		{"null codec", "POST", "/v1/audio_settings", e.key, jsonType, with(settingsBody(), "audio_codec", nil), 422, "ValidationFailed", "audio_codec"},
		{"codec not a string", "POST", "/v1/audio_settings", e.key, jsonType, with(settingsBody(), "audio_codec", 7), 422, "ValidationFailed", "audio_codec"},
		{"unknown codec", "POST", "/v1/audio_settings", e.key, jsonType, with(settingsBody(), "audio_codec", "opus"), 422, "ValidationFailed", "audio_codec"},
		{"unknown protocol", "POST", "/v1/audio_settings", e.key, jsonType, with(settingsBody(), "audio_protocol", "sip"), 422, "ValidationFailed", "audio_protocol"},
		{"unknown format", "POST", "/v1/audio_settings", e.key, jsonType, with(settingsBody(), "audio_format", "wav"), 422, "ValidationFailed", "audio_format"},
		{"sample rate as string", "POST", "/v1/audio_settings", e.key, jsonType, with(settingsBody(), "sample_rate", "8000"), 422, "ValidationFailed", "sample_rate"},
		{"sample rate 44100", "POST", "/v1/audio_settings", e.key, jsonType, with(settingsBody(), "sample_rate", 44100), 422, "ValidationFailed", "sample_rate"},
		{"fractional channels", "POST", "/v1/audio_settings", e.key, jsonType, with(settingsBody(), "channels", 1.5), 422, "ValidationFailed", "channels"},
		{"three channels", "POST", "/v1/audio_settings", e.key, jsonType, with(settingsBody(), "channels", 3), 422, "ValidationFailed", "channels"},
		{"pcm16 without s16le", "POST", "/v1/audio_settings", e.key, jsonType, with(settingsBody(), "audio_codec", "pcm16"), 422, "ValidationFailed", "sample_format"},
		{"mulaw with s16le", "POST", "/v1/audio_settings", e.key, jsonType, with(settingsBody(), "sample_format", "s16le"), 422, "ValidationFailed", "sample_format"},
		{"unknown channel leg", "POST", "/v1/audio_settings", e.key, jsonType, with(settingsBody(), "channel", "left"), 422, "ValidationFailed", "channel"},
		{"unknown audio settings", "GET", "/v1/audio_settings/" + unknownID, e.key, "", nil, 404, "NotFound", ""},
		{"malformed audio settings id", "GET", "/v1/audio_settings/nope", e.key, "", nil, 404, "NotFound", ""},
		{"other tenant's audio settings", "GET", "/v1/audio_settings/" + otherASID, e.key, "", nil, 404, "NotFound", ""},
		{"session with no fields", "POST", "/v1/register_session", e.key, jsonType, `{}`, 422, "ValidationFailed", "audio_settings_id"},
		{"missing model hash", "POST", "/v1/register_session", e.key, jsonType, with(sess, "model_hash", deleteField, "call_id", "c1"), 422, "ValidationFailed", "model_hash"},
		{"threshold above 1", "POST", "/v1/register_session", e.key, jsonType, with(sess, "authenticity_threshold", 1.5, "call_id", "c2"), 422, "ValidationFailed", "authenticity_threshold"},
		{"threshold negative", "POST", "/v1/register_session", e.key, jsonType, with(sess, "authenticity_threshold", -0.1, "call_id", "c3"), 422, "ValidationFailed", "authenticity_threshold"},
		{"threshold as string", "POST", "/v1/register_session", e.key, jsonType, with(sess, "authenticity_threshold", "0.8", "call_id", "c4"), 422, "ValidationFailed", "authenticity_threshold"},
		{"zero duration", "POST", "/v1/register_session", e.key, jsonType, with(sess, "audio_total_duration", 0, "call_id", "c5"), 422, "ValidationFailed", "audio_total_duration"},
		{"duration above maximum", "POST", "/v1/register_session", e.key, jsonType, with(sess, "audio_total_duration", 121, "call_id", "c6"), 422, "ValidationFailed", "audio_total_duration"},
		{"empty call id", "POST", "/v1/register_session", e.key, jsonType, with(sess, "call_id", ""), 422, "ValidationFailed", "call_id"},
		{"call id too long", "POST", "/v1/register_session", e.key, jsonType, with(sess, "call_id", strings.Repeat("x", 129)), 422, "ValidationFailed", "call_id"},
		{"call id as number", "POST", "/v1/register_session", e.key, jsonType, with(sess, "call_id", 42), 422, "ValidationFailed", "call_id"},
		{"unknown model", "POST", "/v1/register_session", e.key, jsonType, with(sess, "model_hash", "abc", "call_id", "c7"), 422, "ValidationFailed", "model_hash"},
		{"unknown audio settings id", "POST", "/v1/register_session", e.key, jsonType, with(sess, "audio_settings_id", unknownID, "call_id", "c8"), 422, "ValidationFailed", "audio_settings_id"},
		{"other tenant's audio settings id", "POST", "/v1/register_session", e.key, jsonType, with(sess, "audio_settings_id", otherASID, "call_id", "c9"), 422, "ValidationFailed", "audio_settings_id"},
		{"second live session for a call", "POST", "/v1/register_session", e.key, jsonType, sess, 409, "Conflict", ""},
		{"unknown session", "GET", "/v1/register_session/" + unknownID, e.key, "", nil, 404, "NotFound", ""},
		{"other tenant's session", "GET", "/v1/register_session/" + otherSessID, e.key, "", nil, 404, "NotFound", ""},
		{"delete other tenant's session", "DELETE", "/v1/register_session/" + otherSessID, e.key, "", nil, 404, "NotFound", ""},
		{"delete unknown session", "DELETE", "/v1/register_session/" + unknownID, e.key, "", nil, 404, "NotFound", ""},
		{"delete ended session", "DELETE", "/v1/register_session/" + cancelledID, e.key, "", nil, 409, "Conflict", ""},
		{"unknown route", "GET", "/v1/nothing", e.key, "", nil, 404, "NotFound", ""},
		{"wrong method", "PUT", "/v1/register_session/" + liveID, e.key, jsonType, `{}`, 405, "MethodNotAllowed", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, _ := e.do(t, tt.method, tt.path, tt.key, tt.contentType, tt.body)
			if code != tt.status || body["code"] != tt.code {
				t.Fatalf("%s %s = %d %v, want %d %s", tt.method, tt.path, code, body, tt.status, tt.code)
			}
			if msg, _ := body["message"].(string); msg == "" {
				t.Errorf("error without message: %v", body)
			}
			if tt.field != "" && !namesField(body, tt.field) {
				t.Errorf("errors %v do not name %s", body["errors"], tt.field)
			}
		})
	}
	// Nothing above may have disturbed the live session.
	if _, got, _ := e.do(t, "GET", "/v1/register_session/"+liveID, e.key, "", nil); got["state"] != "PROCESSING_AUDIO" {
		t.Errorf("live session after the bad inputs: %v", got)
	}
}

// namesField reports whether an error body's errors name field with a
// message.
func namesField(body map[string]any, field string) bool {
	list, _ := body["errors"].([]any)
	for _, item := range list {
		m, _ := item.(map[string]any)
		if m["field"] == field && m["message"] != "" {
			return true
		}
	}
	return false
}

func TestRequestID(t *testing.T) {
	e := newEnv(t, zap.NewNop())
	for _, tt := range []struct{ sent, want string }{
		{"abc-123", "abc-123"},
		{"bad id with spaces", ""},
		{strings.Repeat("a", 65), ""},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", e.srv.URL+"/alive", nil)
		req.Header.Set("X-Request-Id", tt.sent)
		resp, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := resp.Header.Get("X-Request-Id")
		if (tt.want != "" && got != tt.want) || (tt.want == "" && (got == tt.sent || got == "")) {
			t.Errorf("sent %q, got %q", tt.sent, got)
		}
	}
}

func TestReadyWhileDraining(t *testing.T) {
	e := newEnv(t, zap.NewNop())
	e.handler.SetDraining()
	code, body, _ := e.do(t, "GET", "/ready", "", "", nil)
	if code != http.StatusServiceUnavailable || body["code"] != "Unavailable" {
		t.Fatalf("GET /ready while draining = %d %v", code, body)
	}
	if code, _, _ := e.do(t, "GET", "/alive", "", "", nil); code != http.StatusNoContent {
		t.Fatalf("GET /alive while draining = %d", code)
	}
}

// BenchmarkGetRegisterSession measures GET /v1/register_session/{id}
// through the whole handler stack (request id, metrics, API-key check
// against SQLite, session read, JSON), without the network.
func BenchmarkGetRegisterSession(b *testing.B) {
	e := newEnv(b, zap.NewNop())
	body, _ := json.Marshal(settingsBody())
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/audio_settings", bytes.NewReader(body))
	req.Header.Set("apikey", e.key)
	req.Header.Set("Content-Type", jsonType)
	e.handler.ServeHTTP(rec, req)
	var as map[string]any
	json.Unmarshal(rec.Body.Bytes(), &as)
	body, _ = json.Marshal(map[string]any{"audio_settings_id": as["id"], "authenticity_threshold": 0.8,
		"audio_total_duration": 30, "call_id": "bench", "model_hash": e.model})
	rec = httptest.NewRecorder()
	req = httptest.NewRequest("POST", "/v1/register_session", bytes.NewReader(body))
	req.Header.Set("apikey", e.key)
	req.Header.Set("Content-Type", jsonType)
	e.handler.ServeHTTP(rec, req)
	var rs map[string]any
	json.Unmarshal(rec.Body.Bytes(), &rs)
	path := "/v1/register_session/" + rs["id"].(string)

	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("apikey", e.key)
		e.handler.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func TestVerifySessions(t *testing.T) {
	e := newEnv(t, zaptest.NewLogger(t))
	_, as, _ := e.do(t, "POST", "/v1/audio_settings", e.key, jsonType, settingsBody())
	cred, foreign := e.credential(t, "default"), e.credential(t, "other")
	tampered := alter(cred)
	body := map[string]any{"audio_settings_id": as["id"], "authenticity_threshold": 0.8, "audio_total_duration": 20,
		"call_id": "verify-1", "model_hash": e.model, "credential": cred, "similarity_threshold": 0.7}

	code, vs, _ := e.do(t, "POST", "/v1/verify_session", e.key, jsonType, body)
	if code != http.StatusCreated || vs["state"] != "PROCESSING_AUDIO" || vs["similarity_threshold"] != 0.7 {
		t.Fatalf("POST /v1/verify_session = %d %v", code, vs)
	}
	if _, ok := vs["credential"]; ok {
		t.Error("the verify session echoes the credential")
	}
	id := vs["id"].(string)
	if code, got, _ := e.do(t, "GET", "/v1/verify_session/"+id, e.key, "", nil); code != 200 || got["id"] != id {
		t.Errorf("GET verify session = %d %v", code, got)
	}
	if code, _, _ := e.do(t, "GET", "/v1/register_session/"+id, e.key, "", nil); code != 404 {
		t.Errorf("a verify session read as a register session: %d", code)
	}
	if code, _, _ := e.do(t, "DELETE", "/v1/verify_session/"+id, e.key, "", nil); code != 204 {
		t.Errorf("DELETE verify session = %d", code)
	}

	tests := []struct {
		name, path string
		body       map[string]any
		field      string
		message    string
	}{
		{"no credential", "/v1/verify_session", with(body, "credential", deleteField, "call_id", "v2"), "credential", "is required"},
		{"garbage credential", "/v1/verify_session", with(body, "credential", "%%% not base64 %%%", "call_id", "v3"), "credential", "is not a credential"},
		{"other tenant's credential", "/v1/verify_session", with(body, "credential", foreign, "call_id", "v4"), "credential", "another tenant"},
		{"altered credential", "/v1/verify_session", with(body, "credential", tampered, "call_id", "v5"), "credential", "altered"},
		{"credential as number", "/v1/verify_session", with(body, "credential", 5, "call_id", "v6"), "credential", "must be a string"},
		{"similarity threshold above 1", "/v1/verify_session", with(body, "similarity_threshold", 2, "call_id", "v7"), "similarity_threshold", "between 0 and 1"},
		{"similarity threshold as string", "/v1/verify_session", with(body, "similarity_threshold", "high", "call_id", "v8"), "similarity_threshold", "must be a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, got, _ := e.do(t, "POST", tt.path, e.key, jsonType, tt.body)
			if code != http.StatusUnprocessableEntity || got["code"] != "ValidationFailed" || !namesField(got, tt.field) {
				t.Fatalf("%d %v, want 422 naming %s", code, got, tt.field)
			}
			for _, item := range got["errors"].([]any) {
				if m := item.(map[string]any); m["field"] == tt.field && !strings.Contains(m["message"].(string), tt.message) {
					t.Errorf("message %q, want it to say %q", m["message"], tt.message)
				}
			}
		})
	}
}

// alter changes one character in the middle of a credential to another
// base64url character: still well-formed, no longer authentic.
func alter(cred string) string {
	b := []byte(cred)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}
