package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/earshot-voice/earshot/audiohook"
)

// TestCrashMidCall: one process on the embedded store is killed (SIGKILL)
// while two calls stream, and started again on the same data dir. Both
// sessions keep their stored progress. The call that does not come back
// ends FAILED StreamInterrupted after the grace period, and its call id is
// free again; the call that reconnects within the grace period is claimed
// again (its collection restarts) and reaches SUCCESS.
func TestCrashMidCall(t *testing.T) {
	dir := t.TempDir()
	mk := make([]byte, 32)
	rand.Read(mk)
	masterKey := hex.EncodeToString(mk)
	first := startReplica(t, "first", "", masterKey, "--data-dir", dir)
	c := &cluster{t: t, replicas: []*replica{first}}
	for _, l := range first.log() {
		if strings.Contains(l, `"bootstrap credentials"`) {
			c.key, c.secret = jsonField(l, "api_key"), jsonField(l, "audiohook_client_secret")
		}
	}
	settings := c.settings(first)
	audio := fixture(t, "enrol-s01.wav")

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	loop := func(cl *audiohook.Client) {
		defer wg.Done()
		for stream(ctx, cl, audio, 200*time.Millisecond) == nil {
		}
	}
	lost, back := uuid.NewString(), uuid.NewString()
	ids := map[string]string{}
	for _, callID := range []string{lost, back} {
		ids[callID] = c.session(first, settings, callID, 6)
		cl, _ := openStream(t, c, first, callID)
		defer cl.Drop()
		wg.Add(1)
		go loop(cl)
	}
	progress := func(r *replica, id string) (string, float64) {
		_, rs := c.rest(r, "GET", "/v1/register_session/"+id, nil)
		res, _ := rs["result"].(map[string]any)
		p, _ := res["audio_seconds"].(float64)
		s, _ := rs["state"].(string)
		return s, p
	}
	// The calls stream before the crash (their progress is written to the
	// store every second).
	for _, id := range ids {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if _, p := progress(first, id); p >= 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("session %s shows no progress", id)
			}
		}
	}
	first.kill()
	before := map[string]float64{}
	second := startReplica(t, "second", "", masterKey, "--data-dir", dir)
	for callID, id := range ids {
		s, p := progress(second, id)
		if s != "PROCESSING_AUDIO" || p <= 0 {
			t.Fatalf("call %s after the restart: %s with %v s; want PROCESSING_AUDIO with its progress", callID, s, p)
		}
		before[id] = p
	}
	// One call reconnects, as Genesys does after a dropped connection.
	cl, msgs := openStream(t, c, second, back)
	defer cl.Drop()
	wg.Add(1)
	go loop(cl)
	select {
	case m := <-msgs:
		if m.Type != audiohook.TypeDisconnect {
			t.Errorf("reconnected call: got %s, want disconnect when its session completes", m.Type)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the reconnected call's session never completed")
	}
	if rs := awaitState(t, c, second, ids[back]); rs["state"] != "SUCCESS" {
		t.Errorf("reconnected call's session: %v", rs)
	}

	rs := awaitStateWithin(t, c, second, ids[lost], 60*time.Second)
	res, _ := rs["result"].(map[string]any)
	failure, _ := rs["error"].(map[string]any)
	if rs["state"] != "FAILED" || failure["code"] != "StreamInterrupted" || res["audio_seconds"] != before[ids[lost]] {
		t.Errorf("the call that did not come back: %v; want FAILED StreamInterrupted with audio_seconds %v", rs, before[ids[lost]])
	}
	if code, _ := c.rest(second, "POST", "/v1/register_session", map[string]any{"audio_settings_id": settings,
		"authenticity_threshold": 0, "audio_total_duration": 6, "call_id": lost, "model_hash": rsModel(t, c, second)}); code != http.StatusCreated {
		t.Errorf("a new session for the interrupted call: %d, want 201", code)
	}
	second.stop()
}

// rsModel returns the first model's hash.
func rsModel(t *testing.T, c *cluster, r *replica) string {
	t.Helper()
	_, m := c.rest(r, "GET", "/v1/models", nil)
	return m["items"].([]any)[0].(map[string]any)["hash"].(string)
}

// jsonField returns a string field of a JSON log line.
func jsonField(line, field string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return ""
	}
	s, _ := m[field].(string)
	return s
}
