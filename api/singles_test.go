package api_test

import (
	"testing"

	"github.com/earshot-voice/earshot/codec"
)

// TestSingles checks how /api/public/singles hands a multipart upload to
// the scorer. The scorer is the hand-written countingScorer: the real
// speaker models are wired elsewhere.
func TestSingles(t *testing.T) {
	e := newIDEnv(t, idOptions{scorer: true})
	token := e.accessToken(t)
	stereo := testWAV(t, codec.Format{Encoding: codec.MuLaw, SampleRate: 8000, Channels: 2}, 1)
	wide := testWAV(t, codec.Format{Encoding: codec.ALaw, SampleRate: 16000, Channels: 1}, 0.5)
	tests := []struct {
		name    string
		audio   []byte
		fields  []string
		seconds float64
		channel string
		model   string
		score   bool
	}{
		{"mono PCM16, defaults", testWAV(t, mono8k, 2), nil, 2, "external", e.model, false},
		{"stereo µ-law, internal leg", stereo, []string{"channel", "internal"}, 1, "internal", e.model, false},
		{"16 kHz A-law with model and credential", wide, []string{"model_hash", e.model, "credential", "abc.DEF-123_="}, 0.5, "external", e.model, true},
		{"unknown fields are ignored", testWAV(t, mono8k, 1), []string{"future_field", "x", "another", "y"}, 1, "external", e.model, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, ct := form(t, tt.audio, tt.fields...)
			r := e.send(t, e.singlesRequest(t, "default", token, body, ct))
			data, _ := r.body["data"].(map[string]any)
			if r.status != 200 || data["audio_seconds"] != tt.seconds || data["model_hash"] != tt.model ||
				data["credential"] != "fake-credential-of-default" {
				t.Fatalf("= %d %v", r.status, r.body)
			}
			if _, ok := data["score"]; ok != tt.score {
				t.Fatalf("score present %v, want %v: %v", ok, tt.score, data)
			}
			e.scorer.mu.Lock()
			got := e.scorer.calls[i]
			e.scorer.mu.Unlock()
			if got.Channel != tt.channel || got.ModelHash != tt.model {
				t.Fatalf("scorer got channel %q model %q", got.Channel, got.ModelHash)
			}
		})
	}

	// Every bad field is named at once.
	body, ct := form(t, []byte("not a wav"), "model_hash", "x", "channel", "left", "model_hash", "y")
	r := e.send(t, e.singlesRequest(t, "default", token, body, ct))
	for _, f := range []string{"audio", "model_hash", "channel"} {
		if r.status != 422 || !namesField(r.body, f) {
			t.Errorf("errors %v do not name %s", r.body["errors"], f)
		}
	}
}

// TestSinglesWithoutScorer: until speaker models are wired, the endpoint
// still authenticates and validates, then answers 503.
func TestSinglesWithoutScorer(t *testing.T) {
	e := newIDEnv(t, idOptions{})
	token := e.accessToken(t)
	body, ct := form(t, []byte("RIFF...."))
	if r := e.send(t, e.singlesRequest(t, "default", token, body, ct)); r.status != 422 || !namesField(r.body, "audio") {
		t.Fatalf("bad audio without a scorer = %d %v", r.status, r.body)
	}
	body, ct = form(t, testWAV(t, mono8k, 0.5))
	r := e.send(t, e.singlesRequest(t, "default", token, body, ct))
	if r.status != 503 || r.body["code"] != "Unavailable" || r.body["message"] != "speaker models are not available yet" {
		t.Fatalf("good request without a scorer = %d %v", r.status, r.body)
	}
	if r := e.send(t, e.singlesRequest(t, "default", "", body, ct)); r.status != 401 {
		t.Fatalf("no token without a scorer = %d %v", r.status, r.body)
	}
}
