package main

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseIdentityFlags(t *testing.T) {
	runConfigCases(t, []configCase{
		{name: "defaults", check: func(t *testing.T, c config) {
			if !slices.Equal(c.services, []string{"streaming"}) || c.maxUploadBytes != 32<<20 || c.signingKeyLifetime != 720*time.Hour {
				t.Errorf("defaults: services %v, upload %d, lifetime %v", c.services, c.maxUploadBytes, c.signingKeyLifetime)
			}
		}},
		{name: "services", args: []string{"--services", " billing,streaming ,billing,"}, check: func(t *testing.T, c config) {
			if !slices.Equal(c.services, []string{"billing", "streaming"}) {
				t.Errorf("services %v", c.services)
			}
		}},
		{name: "env", env: map[string]string{"EARSHOT_SERVICES": "streaming,crm", "EARSHOT_MAX_UPLOAD_BYTES": "1048576",
			"EARSHOT_SIGNING_KEY_LIFETIME": "0"}, check: func(t *testing.T, c config) {
			if !slices.Equal(c.services, []string{"streaming", "crm"}) || c.maxUploadBytes != 1<<20 || c.signingKeyLifetime != 0 {
				t.Errorf("env: %v %d %v", c.services, c.maxUploadBytes, c.signingKeyLifetime)
			}
		}},
		{name: "services without streaming", args: []string{"--services", "billing"}, wantErr: "--services"},
		{name: "bad service name", args: []string{"--services", "streaming,Bad Name"}, wantErr: "--services"},
		{name: "zero upload", args: []string{"--max-upload-bytes", "0"}, wantErr: "--max-upload-bytes"},
		{name: "huge upload", args: []string{"--max-upload-bytes", "2000000000"}, wantErr: "--max-upload-bytes"},
		{name: "short key lifetime", args: []string{"--signing-key-lifetime", "10m"}, wantErr: "--signing-key-lifetime"},
	})
}

// TestIdentityServe runs earshot serve twice on one data dir: the
// bootstrap OAuth client gets a token, the token reaches the
// tenant-scoped interface, the bootstrap key manages its service, and the
// signing key made at first start survives the restart, so tokens issued
// before it still verify.
func TestIdentityServe(t *testing.T) {
	isolateEnv(t)
	dir := t.TempDir()
	first := start(t, "--data-dir", dir, "--services", "streaming,billing")
	var creds map[string]string
	for _, l := range first.lines() {
		if strings.Contains(l, `"bootstrap credentials"`) {
			json.Unmarshal([]byte(l), &creds)
		}
	}
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {"roles"},
		"client_id": {creds["oauth_client_id"]}, "client_secret": {creds["oauth_client_secret"]}}
	resp, err := http.PostForm(first.url+"/auth/realms/default/protocol/openid-connect/token", form)
	if err != nil {
		t.Fatal(err)
	}
	var tok map[string]any
	json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	access, _ := tok["access_token"].(string)
	if resp.StatusCode != 200 || access == "" || tok["expires_in"] != 300.0 {
		t.Fatalf("token = %d %v", resp.StatusCode, tok)
	}
	kid := jwksKIDs(t, first.url)
	checkSingles(t, first.url, access)
	code, keys := request(t, "GET", first.url+"/management/v1/api_keys", creds["api_key"], "")
	if list, _ := keys["items"].([]any); code != 200 || len(list) != 1 {
		t.Fatalf("management list = %d %v", code, keys)
	}
	code, created := request(t, "POST", first.url+"/management/v1/api_keys", creds["api_key"], `{"service":"billing"}`)
	if code != 403 || created["code"] != "Forbidden" {
		t.Fatalf("streaming key creating a billing key = %d %v", code, created)
	}
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}

	second := start(t, "--data-dir", dir, "--services", "streaming,billing")
	defer second.stop()
	if again := jwksKIDs(t, second.url); again != kid {
		t.Fatalf("signing key after restart %s, before %s", again, kid)
	}
	checkSingles(t, second.url, access)
}

// jwksKIDs returns the kids of a realm's JWKS, joined.
func jwksKIDs(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/auth/realms/default/protocol/openid-connect/certs")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set struct{ Keys []struct{ KID string } }
	json.NewDecoder(resp.Body).Decode(&set)
	if resp.StatusCode != 200 || len(set.Keys) != 1 || set.Keys[0].KID == "" {
		t.Fatalf("JWKS = %d %+v", resp.StatusCode, set)
	}
	return set.Keys[0].KID
}

// checkSingles posts a (silent) WAV with a token: it must be
// authenticated and accepted; the answer is 200 with data once speaker
// models are wired, 503 Unavailable until then.
func checkSingles(t *testing.T, base, token string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	w, _ := mw.CreateFormFile("audio", "x.wav")
	w.Write(silentWAV(8000))
	mw.Close()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", base+"/api/public/singles", &b)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("x-service-tenant-id", "default")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	_, hasData := out["data"]
	if !(resp.StatusCode == 503 && out["code"] == "Unavailable") && !(resp.StatusCode == 200 && hasData) &&
		!(resp.StatusCode == 422 && out["code"] == "ValidationFailed") {
		t.Fatalf("singles = %d %v", resp.StatusCode, out)
	}
}

// silentWAV returns one second of 8 kHz mono PCM16 silence, n samples.
func silentWAV(n int) []byte {
	var b bytes.Buffer
	le := func(v uint32, size int) {
		for i := range size {
			b.WriteByte(byte(v >> (8 * i)))
		}
	}
	b.WriteString("RIFF")
	le(uint32(36+2*n), 4)
	b.WriteString("WAVEfmt ")
	le(16, 4)
	le(1, 2)    // PCM
	le(1, 2)    // mono
	le(8000, 4) // rate
	le(16000, 4)
	le(2, 2)
	le(16, 2)
	b.WriteString("data")
	le(uint32(2*n), 4)
	b.Write(make([]byte, 2*n))
	return b.Bytes()
}
