package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestWalkThrough runs the steps of the README's walk-through against an
// in-process earshot serve: audio settings, a register session for a
// call id, earshot replay --call-id streaming a testdata recording into
// it, the session's SUCCESS with a credential, then a verify session with
// that credential fed the same way, which matches. The README's commands
// and this test must change together.
func TestWalkThrough(t *testing.T) {
	isolateEnv(t)
	inst := start(t, "--data-dir", t.TempDir())
	defer inst.stop()
	key, secret := replayCredentials(t, inst)
	const (
		registerCall = "6f1c2a9e-3b4d-4c5e-8f60-0a1b2c3d4e01"
		verifyCall   = "6f1c2a9e-3b4d-4c5e-8f60-0a1b2c3d4e02"
	)

	// The speaker models; a session names one by its hash.
	code, models := request(t, "GET", inst.url+"/v1/models", key, "")
	items, _ := models["items"].([]any)
	if code != http.StatusOK || len(items) == 0 {
		t.Fatalf("models = %d %v", code, models)
	}
	model, _ := items[0].(map[string]any)["hash"].(string)

	// 1. The audio format of the calls.
	code, as := request(t, "POST", inst.url+"/v1/audio_settings", key,
		`{"audio_protocol":"audiohook","audio_format":"raw","audio_codec":"mulaw","sample_format":"","sample_rate":8000,"channels":1}`)
	if code != http.StatusCreated {
		t.Fatalf("audio settings = %d %v", code, as)
	}
	asID := as["id"].(string)

	// 2. A register session for the call.
	code, rs := request(t, "POST", inst.url+"/v1/register_session", key, fmt.Sprintf(
		`{"audio_settings_id":%q,"authenticity_threshold":0.8,"audio_total_duration":30,"call_id":%q,"model_hash":%q}`,
		asID, registerCall, model))
	if code != http.StatusCreated {
		t.Fatalf("register session = %d %v", code, rs)
	}
	rsID := rs["id"].(string)

	// 3. The call's audio: earshot replay --call-id streams a recording
	// as that call, and returns once the server has finalised it.
	replayCall(t, inst.url, key, secret, registerCall, "../../testdata/enrol-s01.wav")

	// 4. The session's end state: SUCCESS, with the credential.
	code, got := request(t, "GET", inst.url+"/v1/register_session/"+rsID, key, "")
	result, _ := got["result"].(map[string]any)
	credential, _ := result["credential"].(string)
	if code != http.StatusOK || got["state"] != "SUCCESS" || credential == "" {
		t.Fatalf("register session after its call = %d %v, want SUCCESS with a credential", code, got)
	}

	// 5. A later call of the same speaker, verified against the credential.
	code, vs := request(t, "POST", inst.url+"/v1/verify_session", key, fmt.Sprintf(
		`{"audio_settings_id":%q,"authenticity_threshold":0.8,"audio_total_duration":15,"call_id":%q,"model_hash":%q,"credential":%q}`,
		asID, verifyCall, model, credential))
	if code != http.StatusCreated {
		t.Fatalf("verify session = %d %v", code, vs)
	}
	replayCall(t, inst.url, key, secret, verifyCall, "../../testdata/verify-s01.wav")
	code, got = request(t, "GET", inst.url+"/v1/verify_session/"+vs["id"].(string), key, "")
	result, _ = got["result"].(map[string]any)
	if code != http.StatusOK || got["state"] != "SUCCESS" || result["decision"] != "MATCH" {
		t.Fatalf("verify session after its call = %d %v, want SUCCESS with decision MATCH", code, got)
	}
}

// replayCall runs earshot replay as the walk-through does: one call with
// the given conversation id, signed with the AudioHook client secret.
func replayCall(t *testing.T, url, key, secret, callID, file string) {
	t.Helper()
	var stdout, stderr strings.Builder
	args := []string{"replay", "--url", "ws" + strings.TrimPrefix(url, "http"), "--api-key", key, "--client-secret", secret,
		"--call-id", callID, "--quiet", file}
	if err := run(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("replay --call-id %s %s: %v\n%s\n%s", callID, file, err, stdout.String(), stderr.String())
	}
}
