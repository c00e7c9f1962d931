package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"testing"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// TestSinglesWithSpeakerModel is acceptance check 1 of the tenant-scoped
// interface with the real scorer: a standard OAuth client gets a token and
// enrols a recorded voice through /api/public/singles, then checks two more
// recordings against the credential it got: the same speaker matches,
// another does not.
func TestSinglesWithSpeakerModel(t *testing.T) {
	e := newIDEnv(t, idOptions{real: true, maxUpload: 1 << 20})
	cfg := clientcredentials.Config{
		ClientID: e.creds.OAuthClientID, ClientSecret: e.creds.OAuthClientSecret,
		TokenURL: e.srv.URL + tokenPath("default"), Scopes: []string{"roles"},
	}
	ctx := context.WithValue(t.Context(), oauth2.HTTPClient, e.srv.Client())
	client := cfg.Client(ctx)
	post := func(file string, fields ...string) (int, map[string]any) {
		t.Helper()
		audio, err := os.ReadFile("../testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		body, ct := form(t, audio, fields...)
		resp, err := client.Do(e.singlesRequest(t, "default", "", body, ct))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		data, _ := out["data"].(map[string]any)
		if data == nil {
			data = out
		}
		return resp.StatusCode, data
	}

	code, enrol := post("enrol-s01.wav")
	cred, _ := enrol["credential"].(string)
	if code != http.StatusOK || cred == "" || enrol["voice_audio_collected"].(float64) < 5 ||
		enrol["audio_seconds"].(float64) < 11 || enrol["model_hash"] != e.model || enrol["score"] != nil {
		t.Fatalf("enrolment = %d %v", code, enrol)
	}
	for _, c := range []struct{ file, decision string }{{"verify-s01.wav", "MATCH"}, {"verify-s04.wav", "NO_MATCH"}} {
		code, got := post(c.file, "credential", cred)
		if code != http.StatusOK || got["decision"] != c.decision || got["score"] == nil || got["credential"] == "" {
			t.Errorf("%s against the credential = %d %v, want %s", c.file, code, got, c.decision)
		}
		t.Logf("%s: score %v, decision %v, authenticity %v", c.file, got["score"], got["decision"], got["authenticity"])
	}

	// Input the model cannot use is named.
	tampered := alter(cred)
	for _, c := range []struct{ name, file, credential, field string }{
		{"altered credential", "verify-s01.wav", tampered, "credential"},
		{"credential of another tenant", "verify-s01.wav", otherTenantCredential(t, e), "credential"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, got := post(c.file, "credential", c.credential)
			if code != http.StatusUnprocessableEntity || got["code"] != "ValidationFailed" || !namesField(got, c.field) {
				t.Fatalf("%d %v, want 422 naming %s", code, got, c.field)
			}
		})
	}
	if code, got := post("README.md"); code != http.StatusUnprocessableEntity || !namesField(got, "audio") {
		t.Fatalf("a text file as audio = %d %v, want 422 naming audio", code, got)
	}
}

// otherTenantCredential enrols the fixture for tenant "other" through the
// API with that tenant's own client.
func otherTenantCredential(t *testing.T, e *idEnv) string {
	t.Helper()
	cfg := clientcredentials.Config{ClientID: e.otherClientID, ClientSecret: e.otherClientSecret,
		TokenURL: e.srv.URL + tokenPath("other"), Scopes: []string{"roles"}}
	ctx := context.WithValue(t.Context(), oauth2.HTTPClient, e.srv.Client())
	audio, err := os.ReadFile("../testdata/enrol-s01.wav")
	if err != nil {
		t.Fatal(err)
	}
	body, ct := form(t, audio)
	resp, err := cfg.Client(ctx).Do(e.singlesRequest(t, "other", "", body, ct))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data struct{ Credential string } `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != 200 || out.Data.Credential == "" {
		t.Fatalf("other tenant's enrolment: %d", resp.StatusCode)
	}
	return out.Data.Credential
}
