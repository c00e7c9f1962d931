package replay

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap/zaptest"

	"github.com/earshot-voice/earshot/audiohook"
	"github.com/earshot-voice/earshot/codec"
)

// fakeEarshot serves the REST calls of --register and the AudioHook
// endpoint on one server, as Earshot does: a session is SUCCESS once a
// stream for its call_id has ended after streaming its audio, FAILED
// (Cancelled) when deleted.
type fakeEarshot struct {
	t           *testing.T
	mu          sync.Mutex
	settings    map[string]int // id → channels
	sessions    map[string]*fakeSession
	byCall      map[string]*fakeSession
	conflictFor int // answer 409 to the n-th session creation (1-based); 0 never
	created     int
	sessionless int  // streams without a session
	allowBare   bool // such streams are expected (a share of calls register)
}

type fakeSession struct {
	callID, model string
	total         float64
	state, code   string
}

func (f *fakeEarshot) SelectMedia(_, _ string, offered []audiohook.Media) int {
	return (&fakeConsumer{}).SelectMedia("", "", offered)
}

func (f *fakeEarshot) StartStream(_ context.Context, info audiohook.StreamInfo, _ audiohook.Control) (audiohook.Stream, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byCall[info.ConversationID] == nil {
		f.sessionless++
		if !f.allowBare {
			f.t.Errorf("a stream for call %s, which has no session", info.ConversationID)
		}
	}
	return &sessionStream{f: f, callID: info.ConversationID, ended: make(chan struct{})}, nil
}

type sessionStream struct {
	f       *fakeEarshot
	callID  string
	samples int
	once    sync.Once
	ended   chan struct{}
}

func (s *sessionStream) Run(ctx context.Context) {
	select {
	case <-s.ended:
	case <-ctx.Done():
	}
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	sess := s.f.byCall[s.callID]
	if sess == nil {
		return
	}
	if float64(s.samples)/8000 >= sess.total {
		sess.state = stateSuccess
	} else {
		sess.state, sess.code = stateFailed, "NotEnoughVoice"
	}
}
func (s *sessionStream) Audio(frame []byte)      { s.samples += len(frame) }
func (s *sessionStream) Discarded(time.Duration) {}
func (s *sessionStream) Pause(bool)              {}
func (s *sessionStream) End(string)              { s.once.Do(func() { close(s.ended) }) }

func (f *fakeEarshot) rest(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("apikey") != testKey {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	reply := func(code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		reply(200, map[string]any{"items": []map[string]any{
			{"hash": "wideband-only", "sample_rates": []int{16000}},
			{"hash": "telephone", "sample_rates": []int{8000, 16000}},
		}})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/audio_settings":
		var in map[string]any
		json.NewDecoder(r.Body).Decode(&in)
		if in["audio_codec"] != "mulaw" || in["sample_rate"] != 8000.0 || in["channel"] != "external" || r.Header.Get("Content-Type") != "application/json" {
			reply(422, map[string]string{"code": "ValidationFailed", "message": "bad settings"})
			return
		}
		id := uuid.NewString()
		f.settings[id] = int(in["channels"].(float64))
		reply(201, map[string]any{"id": id})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/register_session":
		var in struct {
			AudioSettingsID       string   `json:"audio_settings_id"`
			AuthenticityThreshold *float64 `json:"authenticity_threshold"`
			AudioTotalDuration    float64  `json:"audio_total_duration"`
			CallID                string   `json:"call_id"`
			ModelHash             string   `json:"model_hash"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		f.created++
		if f.created == f.conflictFor {
			reply(409, map[string]string{"code": "Conflict", "message": "a live session exists for the call"})
			return
		}
		if _, ok := f.settings[in.AudioSettingsID]; !ok || in.AuthenticityThreshold == nil || in.CallID == "" || in.AudioTotalDuration <= 0 {
			reply(422, map[string]string{"code": "ValidationFailed", "message": "bad session"})
			return
		}
		id := uuid.NewString()
		s := &fakeSession{callID: in.CallID, model: in.ModelHash, total: in.AudioTotalDuration, state: stateProcessing}
		f.sessions[id], f.byCall[in.CallID] = s, s
		reply(201, map[string]any{"id": id, "state": s.state})
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/v1/register_session/"):
		s := f.sessions[strings.TrimPrefix(r.URL.Path, "/v1/register_session/")]
		if s == nil || s.state != stateProcessing {
			reply(409, map[string]string{"code": "Conflict"})
			return
		}
		s.state, s.code = stateFailed, "Cancelled"
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/register_session/"):
		s := f.sessions[strings.TrimPrefix(r.URL.Path, "/v1/register_session/")]
		if s == nil {
			reply(404, map[string]string{"code": "NotFound"})
			return
		}
		out := map[string]any{"state": s.state, "call_id": s.callID}
		if s.code != "" {
			out["error"] = map[string]string{"code": s.code, "message": "…"}
		}
		reply(200, out)
	default:
		reply(404, map[string]string{"code": "NotFound"})
	}
}

func newFakeEarshot(t *testing.T) (*fakeEarshot, string) {
	f := &fakeEarshot{t: t, settings: map[string]int{}, sessions: map[string]*fakeSession{}, byCall: map[string]*fakeSession{}}
	h := audiohook.NewHandler(audiohook.Options{Authenticator: fakeAuth{}, Consumer: f, Logger: zaptest.NewLogger(t)})
	mux := http.NewServeMux()
	mux.Handle("/v1/audiohook", h)
	mux.HandleFunc("/", f.rest)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		h.Shutdown(context.Background())
		srv.Close()
	})
	return f, "ws" + strings.TrimPrefix(srv.URL, "http") // no path: /v1/audiohook is implied
}

// runFast runs o against a fake server, polling sessions every millisecond.
func runFast(t *testing.T, o Options) *Summary {
	t.Helper()
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	r.timing.poll = time.Millisecond
	s, err := r.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRegister(t *testing.T) {
	dir := t.TempDir()
	mono := writeWAV(t, dir, "mono.wav", codec.Format{Encoding: codec.L16, SampleRate: 8000, Channels: 1}, tone(8000, 8000, 440, 6000))
	stereo := writeWAV(t, dir, "stereo.wav", codec.Format{Encoding: codec.L16, SampleRate: 8000, Channels: 2}, interleave2(tone(4000, 8000, 440, 6000), tone(4000, 8000, 300, 6000)))

	t.Run("every session reaches SUCCESS", func(t *testing.T) {
		f, url := newFakeEarshot(t)
		s := runFast(t, Options{URL: url, APIKey: testKey, ClientSecret: testSecret, Files: []string{mono, stereo}, Calls: 6, Register: true})
		if s.Calls.Completed != 6 || s.Sessions.Created != 6 || s.Sessions.ByState[stateSuccess] != 6 || len(s.Problems()) != 0 {
			t.Fatalf("calls %+v sessions %+v problems %v errors %+v", s.Calls, s.Sessions, s.Problems(), s.Errors)
		}
		if s.PollMS.Count != 6 {
			t.Errorf("%d sessions timed", s.PollMS.Count)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		var channels []int
		for _, c := range f.settings {
			channels = append(channels, c)
		}
		monoSettings := 0
		for _, c := range channels {
			if c == 1 {
				monoSettings++
			}
		}
		if len(channels) != 6 || monoSettings != 3 {
			t.Errorf("audio settings channels %v, want three of each", channels)
		}
		for _, sess := range f.sessions {
			if sess.model != "telephone" || (sess.total != 1 && sess.total != 0.5) {
				t.Errorf("session %+v: want the 8 kHz model and the file's duration", sess)
			}
		}
	})

	t.Run("a share of the calls register", func(t *testing.T) {
		f, url := newFakeEarshot(t)
		f.allowBare = true
		s := runFast(t, Options{URL: url, APIKey: testKey, ClientSecret: testSecret, Files: []string{mono}, Calls: 10,
			Register: true, RegisterShare: 0.2})
		if s.Calls.Completed != 10 || s.Sessions.Created != 2 || s.Sessions.ByState[stateSuccess] != 2 || len(s.Problems()) != 0 ||
			s.Settings.RegisterShare != 0.2 {
			t.Fatalf("calls %+v sessions %+v problems %v", s.Calls, s.Sessions, s.Problems())
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.sessions) != 2 || f.sessionless != 8 {
			t.Errorf("%d sessions created on the server and %d streams without one, want 2 and 8", len(f.sessions), f.sessionless)
		}
	})

	t.Run("a session the server refuses", func(t *testing.T) {
		f, url := newFakeEarshot(t)
		f.conflictFor = 2
		s := runFast(t, Options{URL: url, APIKey: testKey, ClientSecret: testSecret, Files: []string{mono}, Calls: 3, Concurrency: 1,
			Register: true, AudioTotalDuration: 2 * time.Second, ModelHash: "chosen"})
		// One call never streams; the other two stream 1 s of the 2 s the
		// sessions asked for, and fail.
		if s.Calls.FailedByKind["api_session_409"] != 1 || s.Calls.Completed != 2 || s.Sessions.Created != 2 ||
			s.Sessions.ByState[stateFailed] != 2 || s.Sessions.FailedByCode["NotEnoughVoice"] != 2 {
			t.Fatalf("calls %+v sessions %+v", s.Calls, s.Sessions)
		}
		if p := s.Problems(); len(p) != 2 {
			t.Errorf("problems %v", p)
		}
		if !strings.Contains(s.Errors.Examples["api_session_409"], "Conflict") {
			t.Errorf("examples %v", s.Errors.Examples)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, sess := range f.sessions {
			if sess.model != "chosen" || sess.total != 2 {
				t.Errorf("session %+v", sess)
			}
		}
	})

	t.Run("call ids feed sessions created beforehand", func(t *testing.T) {
		f, url := newFakeEarshot(t)
		ids := []string{"0b5f6e3a-6c1d-4f27-9a3e-2d4c8b1e7f01", "0b5f6e3a-6c1d-4f27-9a3e-2d4c8b1e7f02"}
		f.mu.Lock()
		for _, id := range ids {
			s := &fakeSession{callID: id, total: 1, state: stateProcessing}
			f.sessions[id], f.byCall[id] = s, s
		}
		f.mu.Unlock()
		// No Register: the sessions are the client's, found by call id.
		s := runFast(t, Options{URL: url, APIKey: testKey, ClientSecret: testSecret, Files: []string{mono}, CallIDs: ids})
		if s.Calls.Total != 2 || s.Calls.Completed != 2 || len(s.Problems()) != 0 {
			t.Fatalf("calls %+v problems %v", s.Calls, s.Problems())
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, id := range ids {
			if got := f.byCall[id].state; got != stateSuccess {
				t.Errorf("session of call %s is %s, want %s", id, got, stateSuccess)
			}
		}
		if f.sessionless != 0 {
			t.Errorf("%d streams had no session", f.sessionless)
		}
	})

	t.Run("a call that never opens cancels its session", func(t *testing.T) {
		_, url := newFakeEarshot(t)
		r, err := New(Options{URL: url, APIKey: testKey, Files: []string{mono}, Calls: 1, Register: true}) // unsigned: refused
		if err != nil {
			t.Fatal(err)
		}
		s, err := r.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if s.Calls.FailedByKind["disconnect_unauthorized"] != 1 || s.Sessions.FailedByCode["Cancelled"] != 1 || s.Errors.Total != 1 {
			t.Fatalf("calls %+v sessions %+v errors %+v", s.Calls, s.Sessions, s.Errors)
		}
	})
}
