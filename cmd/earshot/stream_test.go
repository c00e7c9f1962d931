package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/earshot-voice/earshot/audiohook"
	"github.com/earshot-voice/earshot/codec"
)

// These tests run the whole service in-process and drive it as a contact
// centre would: REST for settings and sessions, and a signed AudioHook
// stream of recorded speech (testdata/).

const orgID = "d7934305-0972-4844-938e-9060eef73d05"

// stack is a running service with its bootstrap credentials.
type stack struct {
	*instance
	t      *testing.T
	key    string
	secret []byte
}

func startStack(t *testing.T, dir string, args ...string) *stack {
	t.Helper()
	isolateEnv(t)
	inst := start(t, append([]string{"--data-dir", dir}, args...)...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", strings.Join(inst.lines(), "\n"))
		}
	})
	s := &stack{instance: inst, t: t}
	for _, l := range inst.lines() {
		if strings.Contains(l, `"bootstrap credentials"`) {
			var creds map[string]string
			json.Unmarshal([]byte(l), &creds)
			s.key = creds["api_key"]
			s.secret, _ = base64.StdEncoding.DecodeString(creds["audiohook_client_secret"])
		}
	}
	return s
}

// with reuses another stack's credentials (after a restart).
func (s *stack) with(prev *stack) *stack { s.key, s.secret = prev.key, prev.secret; return s }

func (s *stack) rest(method, path string, body any) (int, map[string]any) {
	s.t.Helper()
	b, _ := json.Marshal(body)
	if body == nil {
		b = nil
	}
	code, out := request(s.t, method, s.url+path, s.key, string(b))
	return code, out
}

func (s *stack) settings(channels int, channel string) string {
	s.t.Helper()
	code, as := s.rest("POST", "/v1/audio_settings", map[string]any{"audio_protocol": "audiohook", "audio_format": "raw",
		"audio_codec": "mulaw", "sample_format": "", "sample_rate": 8000, "channels": channels, "channel": channel})
	if code != http.StatusCreated {
		s.t.Fatalf("audio settings: %d %v", code, as)
	}
	return as["id"].(string)
}

func (s *stack) model() string {
	s.t.Helper()
	_, m := s.rest("GET", "/v1/models", nil)
	return m["items"].([]any)[0].(map[string]any)["hash"].(string)
}

func (s *stack) session(kind, settingsID, callID string, total float64, extra map[string]any) string {
	s.t.Helper()
	body := map[string]any{"audio_settings_id": settingsID, "authenticity_threshold": 0.5, "audio_total_duration": total,
		"call_id": callID, "model_hash": s.model()}
	for k, v := range extra {
		body[k] = v
	}
	code, rs := s.rest("POST", "/v1/"+kind+"_session", body)
	if code != http.StatusCreated {
		s.t.Fatalf("%s session: %d %v", kind, code, rs)
	}
	return rs["id"].(string)
}

// await polls a session until it leaves PROCESSING_AUDIO.
func (s *stack) await(kind, id string) map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, rs := s.rest("GET", "/v1/"+kind+"_session/"+id, nil)
		if code != 200 {
			s.t.Fatalf("GET session: %d %v", code, rs)
		}
		if rs["state"] != "PROCESSING_AUDIO" || time.Now().After(deadline) {
			return rs
		}
		time.Sleep(20 * time.Millisecond) // polling a server, as a client does; not a timing assertion
	}
}

// call is a client-side AudioHook stream whose server messages are read
// on their own goroutine, as a real client reads them.
type call struct {
	t    *testing.T
	c    *audiohook.Client
	msgs chan audiohook.Message
	done chan error
}

func (s *stack) dial(callID string) (*call, audiohook.OpenedParameters) {
	s.t.Helper()
	url := "ws" + strings.TrimPrefix(s.url, "http") + "/v1/audiohook"
	c, _, err := audiohook.Dial(s.t.Context(), audiohook.ClientOptions{URL: url, APIKey: s.key, Secret: s.secret, OrganizationID: orgID})
	if err != nil {
		s.t.Fatalf("dial: %v", err)
	}
	s.t.Cleanup(func() { c.Drop() })
	offer := []audiohook.Media{
		{Type: "audio", Format: "PCMU", Channels: []string{"external", "internal"}, Rate: 8000},
		{Type: "audio", Format: "PCMU", Channels: []string{"external"}, Rate: 8000},
		{Type: "audio", Format: "PCMU", Channels: []string{"internal"}, Rate: 8000},
	}
	opened, m, err := c.Open(s.t.Context(), audiohook.OpenParameters{OrganizationID: orgID, ConversationID: callID,
		Participant: audiohook.Participant{ID: uuid.NewString(), ANI: "+15550100"}, Media: offer})
	if err != nil || m.Seq != 1 || *m.ClientSeq != 1 {
		s.t.Fatalf("open: %v %+v", err, m)
	}
	cl := &call{t: s.t, c: c, msgs: make(chan audiohook.Message, 16), done: make(chan error, 1)}
	go func() {
		for {
			m, err := c.Receive(context.Background())
			if err != nil {
				cl.done <- err
				close(cl.msgs)
				return
			}
			cl.msgs <- m
		}
	}()
	return cl, opened
}

// expect waits for the next server message.
func (cl *call) expect(typ string, seq, clientSeq int64) audiohook.Message {
	cl.t.Helper()
	select {
	case m, ok := <-cl.msgs:
		if !ok {
			cl.t.Fatalf("connection ended waiting for %s", typ)
		}
		if m.Type != typ || m.Seq != seq || m.ClientSeq == nil || *m.ClientSeq != clientSeq {
			cl.t.Fatalf("got %s seq=%d clientseq=%v %s; want %s seq=%d clientseq=%d", m.Type, m.Seq, *m.ClientSeq, m.Parameters, typ, seq, clientSeq)
		}
		return m
	case <-time.After(20 * time.Second):
		cl.t.Fatalf("no %s", typ)
	}
	return audiohook.Message{}
}

// send streams audio in 200 ms frames at ten times real time. A client
// streams in real time; a faster one overruns the call's bounded queue,
// which by design drops the oldest frames (and counts them).
func (cl *call) send(audio []byte, bytesPer200ms int) {
	cl.t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i := 0; i < len(audio); i += bytesPer200ms {
		<-tick.C
		if err := cl.c.SendAudio(cl.t.Context(), audio[i:min(i+bytesPer200ms, len(audio))]); err != nil {
			cl.t.Fatalf("audio: %v", err)
		}
	}
}

func (cl *call) close(reason string, seq int64) {
	cl.t.Helper()
	if _, err := cl.c.Send(cl.t.Context(), audiohook.TypeClose, audiohook.CloseParameters{Reason: reason}); err != nil {
		cl.t.Fatal(err)
	}
	cl.expect(audiohook.TypeClosed, seq, cl.c.Seq())
	cl.c.CloseSocket()
}

// fixture returns a testdata recording as µ-law bytes.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	f, err := os.Open("../../testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	format, pcm, err := codec.ReadWAV(f, 1<<22)
	if err != nil || format.SampleRate != 8000 || format.Channels != 1 {
		t.Fatalf("%s: %+v %v", name, format, err)
	}
	return codec.AppendMuLawEncode(nil, pcm)
}

// stereo interleaves two µ-law channels (external first), the second
// attenuated as an agent leg heard through the line.
func stereo(external, internal []byte) []byte {
	n := max(len(external), len(internal))
	out := make([]byte, 0, 2*n)
	silence := codec.AppendMuLawEncode(nil, []int16{0})[0]
	for i := range n {
		e, a := silence, silence
		if i < len(external) {
			e = external[i]
		}
		if i < len(internal) {
			a = internal[i]
		}
		out = append(out, e, a)
	}
	return out
}

func disconnectReason(t *testing.T, m audiohook.Message) audiohook.DisconnectParameters {
	t.Helper()
	var p audiohook.DisconnectParameters
	json.Unmarshal(m.Parameters, &p)
	return p
}

func TestStreamsRegisterAndVerify(t *testing.T) {
	s := startStack(t, t.TempDir())
	defer s.stop()
	enrol, sameSpeaker, otherSpeaker := fixture(t, "enrol-s01.wav"), fixture(t, "verify-s01.wav"), fixture(t, "verify-s04.wav")

	// 1. Session first, then a mono stream: SUCCESS at audio_total_duration,
	// then the server ends the stream with disconnect completed.
	mono := s.settings(1, "external")
	callID := uuid.NewString()
	reg := s.session("register", mono, callID, 10, nil)
	cl, opened := s.dial(callID)
	if len(opened.Media) != 1 || strings.Join(opened.Media[0].Channels, ",") != "external" {
		t.Fatalf("opened %+v, want mono external for mono settings", opened.Media)
	}
	cl.send(enrol, 1600)
	m := cl.expect(audiohook.TypeDisconnect, 2, 1)
	if p := disconnectReason(t, m); p.Reason != "completed" {
		t.Fatalf("disconnect %+v", p)
	}
	cl.close("disconnect", 3)
	rs := s.await("register", reg)
	result, _ := rs["result"].(map[string]any)
	cred, _ := result["credential"].(string)
	if rs["state"] != "SUCCESS" || cred == "" || result["authenticity"] == nil || result["voice_audio_collected"].(float64) < 3 ||
		result["audio_seconds"].(float64) != 10 {
		t.Fatalf("register session: %v", rs)
	}

	// 2. Verify, stream first: the session binds from the next frame.
	verify := func(audio []byte) map[string]any {
		t.Helper()
		callID := uuid.NewString()
		cl, _ := s.dial(callID)
		cl.send(audio[:8000], 1600) // 1 s before the session exists
		// Authenticity is not under test here: the decision is.
		id := s.session("verify", mono, callID, 6, map[string]any{"credential": cred, "authenticity_threshold": 0})
		cl.send(audio[8000:], 1600)
		cl.expect(audiohook.TypeDisconnect, 2, 1)
		cl.close("disconnect", 3)
		return s.await("verify", id)
	}
	same, other := verify(sameSpeaker), verify(otherSpeaker)
	for _, v := range []struct {
		rs   map[string]any
		want string
	}{{same, "MATCH"}, {other, "NO_MATCH"}} {
		r, _ := v.rs["result"].(map[string]any)
		if v.rs["state"] != "SUCCESS" || r["decision"] != v.want || r["score"] == nil {
			t.Errorf("verify: %v, want %s", v.rs, v.want)
		}
	}
	t.Logf("verify scores: same speaker %.3f, other speaker %.3f",
		same["result"].(map[string]any)["score"], other["result"].(map[string]any)["score"])

	// 3. Stereo: the caller's leg is enrolled, the agent's leg is the echo
	// reference.
	callID = uuid.NewString()
	reg = s.session("register", s.settings(2, "external"), callID, 10, nil)
	cl, opened = s.dial(callID)
	if len(opened.Media) != 1 || len(opened.Media[0].Channels) != 2 {
		t.Fatalf("opened %+v, want stereo for two-channel settings", opened.Media)
	}
	cl.send(stereo(enrol, otherSpeaker), 3200)
	cl.expect(audiohook.TypeDisconnect, 2, 1)
	cl.close("disconnect", 3)
	if rs := s.await("register", reg); rs["state"] != "SUCCESS" {
		t.Fatalf("stereo register session: %v", rs)
	}
}

func TestStreamsEndingEarly(t *testing.T) {
	s := startStack(t, t.TempDir())
	defer s.stop()
	enrol := fixture(t, "enrol-s01.wav")
	mono := s.settings(1, "external")

	tests := []struct {
		name  string
		audio []byte
		end   func(cl *call)
		state string
		code  string
	}{
		{"close with enough voice", enrol, func(cl *call) { cl.close("end", 2) }, "SUCCESS", ""},
		{"close with too little voice", enrol[:16000], func(cl *call) { cl.close("end", 2) }, "FAILED", "NotEnoughVoice"},
		{"socket dropped with enough voice", enrol, func(cl *call) { cl.c.Drop() }, "SUCCESS", ""},
		{"socket dropped at once", enrol[:1600], func(cl *call) { cl.c.Drop() }, "FAILED", "NotEnoughVoice"},
		{"client error then close", enrol, func(cl *call) {
			cl.c.Send(cl.t.Context(), audiohook.TypeError, audiohook.ErrorParameters{Code: 500, Message: "Internal client error"})
			cl.close("error", 2)
		}, "SUCCESS", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			callID := uuid.NewString()
			id := s.session("register", mono, callID, 60, nil)
			cl, _ := s.dial(callID)
			cl.t = t
			cl.send(tt.audio, 1600)
			tt.end(cl)
			rs := s.await("register", id)
			errObj, _ := rs["error"].(map[string]any)
			if rs["state"] != tt.state || (tt.code != "" && errObj["code"] != tt.code) {
				t.Fatalf("session: %v, want %s %s", rs, tt.state, tt.code)
			}
		})
	}
}

func TestStreamsMediaMismatchAndProbe(t *testing.T) {
	s := startStack(t, t.TempDir())
	defer s.stop()
	// Two-channel settings, internal leg: the offer has stereo, so it fits.
	// A-law settings never fit an AudioHook offer (PCMU only).
	code, as := s.rest("POST", "/v1/audio_settings", map[string]any{"audio_protocol": "audiohook", "audio_format": "raw",
		"audio_codec": "alaw", "sample_format": "", "sample_rate": 8000, "channels": 1})
	if code != 201 {
		t.Fatal(code, as)
	}
	callID := uuid.NewString()
	id := s.session("register", as["id"].(string), callID, 10, nil)
	cl, opened := s.dial(callID)
	if len(opened.Media) != 0 {
		t.Fatalf("opened %+v, want no media", opened.Media)
	}
	cl.expect(audiohook.TypeDisconnect, 2, 1)
	cl.close("disconnect", 3)
	rs := s.await("register", id)
	if errObj, _ := rs["error"].(map[string]any); rs["state"] != "FAILED" || errObj["code"] != "AudioFormatMismatch" {
		t.Fatalf("session: %v", rs)
	}

	// The connection probe: opened, close, closed, and nothing else.
	probe, _ := s.dial(audiohook.NullUUID)
	probe.close("end", 2)
}

func TestStreamsDrainOnShutdown(t *testing.T) {
	dir := t.TempDir()
	s := startStack(t, dir)
	enrol := fixture(t, "enrol-s01.wav")
	mono := s.settings(1, "external")
	enough, short := uuid.NewString(), uuid.NewString()
	idEnough := s.session("register", mono, enough, 120, nil)
	idShort := s.session("register", mono, short, 120, nil)
	waiting := s.session("register", mono, uuid.NewString(), 120, nil) // no stream at all
	a, _ := s.dial(enough)
	b, _ := s.dial(short)
	a.send(enrol, 1600)
	b.send(enrol[:8000], 1600)
	// Both sessions must have taken their audio before the drain starts.
	for _, id := range []string{idEnough, idShort} {
		for {
			_, rs := s.rest("GET", "/v1/register_session/"+id, nil)
			r, _ := rs["result"].(map[string]any)
			if sec, _ := r["audio_seconds"].(float64); (id == idEnough && sec >= 11) || (id == idShort && sec >= 1) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	stopped := make(chan error, 1)
	go func() { stopped <- s.stop() }() // what SIGTERM does
	for _, cl := range []*call{a, b} {
		m := cl.expect(audiohook.TypeDisconnect, 2, 1)
		if p := disconnectReason(t, m); p.Reason != "completed" {
			t.Fatalf("drain disconnect %+v", p)
		}
		cl.close("disconnect", 3)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("serve after drain: %v", err)
	}

	again := startStack(t, dir).with(s)
	defer again.stop()
	for _, c := range []struct{ id, state, code string }{
		{idEnough, "SUCCESS", ""}, {idShort, "FAILED", "Internal"}, {waiting, "PROCESSING_AUDIO", ""},
	} {
		_, rs := again.rest("GET", "/v1/register_session/"+c.id, nil)
		errObj, _ := rs["error"].(map[string]any)
		if rs["state"] != c.state || (c.code != "" && errObj["code"] != c.code) {
			t.Errorf("after the drain: %v, want %s %s", rs, c.state, c.code)
		}
	}
}
