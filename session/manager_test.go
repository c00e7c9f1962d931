package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"

	"github.com/earshot-voice/earshot/voiceprint"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// memStore is an in-memory Store with the same contract as package store.
type memStore struct {
	mu              sync.Mutex
	settings        map[string]AudioSettings
	sessions        map[string]Session
	progressBatches int // UpdateProgress calls
	leases          map[string]time.Time
}

func newMemStore() *memStore {
	return &memStore{settings: map[string]AudioSettings{}, sessions: map[string]Session{}}
}

func (m *memStore) CreateAudioSettings(_ context.Context, s AudioSettings) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.settings[s.ID] = s
	return nil
}

func (m *memStore) AudioSettings(_ context.Context, tenantID, id string) (AudioSettings, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.settings[id]
	if !ok || s.TenantID != tenantID {
		return AudioSettings{}, ErrNotFound
	}
	return s, nil
}

func (m *memStore) CreateSession(_ context.Context, s Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range m.sessions {
		if o.TenantID == s.TenantID && o.CallID == s.CallID && o.State == StateProcessingAudio {
			return ErrConflict
		}
	}
	m.sessions[s.ID] = s
	return nil
}

func (m *memStore) Session(_ context.Context, tenantID, id string) (Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok || s.TenantID != tenantID {
		return Session{}, ErrNotFound
	}
	return s, nil
}

func (m *memStore) UpdateSession(_ context.Context, s Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.sessions[s.ID]
	switch {
	case !ok || old.TenantID != s.TenantID:
		return ErrNotFound
	case old.State != StateProcessingAudio:
		return ErrNotActive
	case old.Claim != s.Claim:
		return ErrConflict
	}
	s.InterruptedAt = old.InterruptedAt
	m.sessions[s.ID] = s
	return nil
}

func (m *memStore) UpdateProgress(_ context.Context, ss []Session) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.progressBatches++
	var stale []string
	for _, s := range ss {
		if old, ok := m.sessions[s.ID]; ok && old.TenantID == s.TenantID && old.State == StateProcessingAudio && old.Claim == s.Claim {
			old.Progress, old.UpdatedAt = s.Progress, s.UpdatedAt
			m.sessions[s.ID] = old
		} else {
			stale = append(stale, s.ID)
		}
	}
	return stale, nil
}

func (m *memStore) ActiveSessions(context.Context) ([]Session, error) {
	return m.where(func(s Session) bool { return s.State == StateProcessingAudio }), nil
}

func (m *memStore) where(f func(Session) bool) []Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Session
	for _, s := range m.sessions {
		if f(s) {
			out = append(out, s)
		}
	}
	return out
}

func (m *memStore) ClaimSession(_ context.Context, tenantID, id, replica string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	switch {
	case !ok || s.TenantID != tenantID:
		return ErrNotFound
	case s.State != StateProcessingAudio:
		return ErrNotActive
	case s.Claim != "" && s.Claim != replica:
		return ErrConflict
	}
	s.Claim, s.InterruptedAt = replica, time.Time{}
	m.sessions[id] = s
	return nil
}

func (m *memStore) LiveSession(_ context.Context, tenantID, callID string) (Session, error) {
	for _, s := range m.where(func(s Session) bool {
		return s.TenantID == tenantID && s.CallID == callID && s.State == StateProcessingAudio
	}) {
		return s, nil
	}
	return Session{}, ErrNotFound
}

func (m *memStore) WaitingSessions(context.Context) ([]Session, error) {
	return m.where(func(s Session) bool { return s.State == StateProcessingAudio && s.Claim == "" }), nil
}

func (m *memStore) FailInterrupted(_ context.Context, before time.Time, f Failure, at time.Time) ([]Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Session
	for id, s := range m.sessions {
		if s.State == StateProcessingAudio && s.Claim == "" && !s.InterruptedAt.IsZero() && !s.InterruptedAt.After(before) {
			s.State, s.Failure, s.UpdatedAt = StateFailed, &f, at
			m.sessions[id] = s
			out = append(out, s)
		}
	}
	return out, nil
}

func (m *memStore) Heartbeat(_ context.Context, replica string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.leases == nil {
		m.leases = map[string]time.Time{}
	}
	m.leases[replica] = at
	return nil
}

func (m *memStore) RemoveReplica(_ context.Context, replica string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.leases, replica)
	return nil
}

func (m *memStore) ExpireReplicas(_ context.Context, staleBefore time.Time, keep string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id, at := range m.leases {
		if id != keep && at.Before(staleBefore) {
			delete(m.leases, id)
			n++
		}
	}
	return n, nil
}

func (m *memStore) ReleaseClaims(_ context.Context, at time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id, s := range m.sessions {
		if _, alive := m.leases[s.Claim]; s.State == StateProcessingAudio && s.Claim != "" && !alive {
			s.Claim, s.InterruptedAt = "", at
			m.sessions[id] = s
			n++
		}
	}
	return n, nil
}

// events records observer calls.
type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) SessionEntered(kind, state, code string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.log = append(e.log, kind+" "+state+" "+code)
}

func (e *events) CallsActive(int)              {}
func (e *events) FrameProcessed(time.Duration) {}
func (e *events) FrameDropped(string)          {}
func (e *events) SessionsActive(string, int)   {}
func (e *events) BreakerState(int)             {}
func (e *events) LeasesExpired(int)            {}

func (e *events) StoreCall(string, time.Duration, bool) {}

func (e *events) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.log, "; ")
}

func newTestManager(t *testing.T, store Store, opts Options) *Manager {
	m := NewManager(store, voiceprint.NewRegistry(), opts, zaptest.NewLogger(t))
	t.Cleanup(m.Close)
	return m
}

func validSettings() AudioSettings {
	return AudioSettings{Protocol: "audiohook", Format: "raw", Codec: "mulaw", SampleRate: 8000, Channels: 1}
}

func TestAudioSettingsValidation(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(*AudioSettings)
		fields []string // invalid fields, in order; nil means valid
	}{
		{"mulaw mono", func(*AudioSettings) {}, nil},
		{"alaw stereo internal", func(s *AudioSettings) { s.Codec, s.Channels, s.Channel = "alaw", 2, "internal" }, nil},
		{"pcm16 16k", func(s *AudioSettings) { s.Codec, s.SampleFormat, s.SampleRate = "pcm16", "s16le", 16000 }, nil},
		{"protocol", func(s *AudioSettings) { s.Protocol = "sip" }, []string{"audio_protocol"}},
		{"format", func(s *AudioSettings) { s.Format = "wav" }, []string{"audio_format"}},
		{"codec", func(s *AudioSettings) { s.Codec = "opus" }, []string{"audio_codec"}},
		{"mulaw with sample format", func(s *AudioSettings) { s.SampleFormat = "s16le" }, []string{"sample_format"}},
		{"mulaw at 16k", func(s *AudioSettings) { s.SampleRate = 16000 }, []string{"sample_rate"}},
		{"pcm16 without sample format", func(s *AudioSettings) { s.Codec = "pcm16" }, []string{"sample_format"}},
		{"pcm16 at 44.1k", func(s *AudioSettings) { s.Codec, s.SampleFormat, s.SampleRate = "pcm16", "s16le", 44100 }, []string{"sample_rate"}},
		{"three channels", func(s *AudioSettings) { s.Channels = 3 }, []string{"channels"}},
		{"zero channels", func(s *AudioSettings) { s.Channels = 0 }, []string{"channels"}},
		{"bad leg", func(s *AudioSettings) { s.Channel = "left" }, []string{"channel"}},
		{"everything", func(s *AudioSettings) { *s = AudioSettings{Channel: "x"} },
			[]string{"audio_protocol", "audio_format", "audio_codec", "channels", "channel"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSettings()
			tt.edit(&s)
			err := s.validate()
			var verr *ValidationError
			if tt.fields == nil {
				if err != nil {
					t.Fatalf("validate = %v", err)
				}
				if s.Channel == "" {
					t.Fatal("default channel not set")
				}
				return
			}
			if !errors.As(err, &verr) {
				t.Fatalf("validate = %v, want *ValidationError", err)
			}
			var got []string
			for _, f := range verr.Fields {
				got = append(got, f.Field)
				if f.Message == "" {
					t.Errorf("field %s has no message", f.Field)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.fields, ",") {
				t.Fatalf("invalid fields %v, want %v", got, tt.fields)
			}
		})
	}
}

func TestCreateValidation(t *testing.T) {
	ctx := t.Context()
	m := newTestManager(t, newMemStore(), Options{MaxAudioTotalDuration: 60})
	as, err := m.CreateAudioSettings(ctx, "t1", validSettings())
	if err != nil {
		t.Fatal(err)
	}
	other, err := m.CreateAudioSettings(ctx, "t2", validSettings())
	if err != nil {
		t.Fatal(err)
	}
	model := m.Models()[0].Hash
	valid := Request{AudioSettingsID: as.ID, AuthenticityThreshold: 0.8, AudioTotalDuration: 30, CallID: "c", ModelHash: model}
	tests := []struct {
		name  string
		edit  func(*Request)
		field string // "" means valid
	}{
		{"valid", func(*Request) {}, ""},
		{"threshold 0", func(r *Request) { r.AuthenticityThreshold = 0 }, ""},
		{"threshold 1", func(r *Request) { r.AuthenticityThreshold = 1 }, ""},
		{"threshold above 1", func(r *Request) { r.AuthenticityThreshold = 1.01 }, "authenticity_threshold"},
		{"threshold negative", func(r *Request) { r.AuthenticityThreshold = -0.1 }, "authenticity_threshold"},
		{"duration zero", func(r *Request) { r.AudioTotalDuration = 0 }, "audio_total_duration"},
		{"duration above max", func(r *Request) { r.AudioTotalDuration = 60.5 }, "audio_total_duration"},
		{"duration at max", func(r *Request) { r.AudioTotalDuration = 60 }, ""},
		{"empty call id", func(r *Request) { r.CallID = "" }, "call_id"},
		{"long call id", func(r *Request) { r.CallID = strings.Repeat("x", 129) }, "call_id"},
		{"128 runes", func(r *Request) { r.CallID = strings.Repeat("é", 128) }, ""},
		{"control character", func(r *Request) { r.CallID = "a\nb" }, "call_id"},
		{"invalid utf-8", func(r *Request) { r.CallID = "a\xffb" }, "call_id"},
		{"unknown model", func(r *Request) { r.ModelHash = "00" }, "model_hash"},
		{"unknown settings", func(r *Request) { r.AudioSettingsID = "5d1a1c57-7a2e-4e39-9a43-7c4fdc2a1c4e" }, "audio_settings_id"},
		{"malformed settings id", func(r *Request) { r.AudioSettingsID = "x" }, "audio_settings_id"},
		{"other tenant's settings", func(r *Request) { r.AudioSettingsID = other.ID }, "audio_settings_id"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := valid
			r.CallID = r.CallID + string(rune('a'+i))
			tt.edit(&r)
			s, err := m.Create(ctx, "t1", KindRegister, r)
			if tt.field == "" {
				if err != nil || s.State != StateProcessingAudio || s.TenantID != "t1" || s.ID == "" {
					t.Fatalf("Create = %+v, %v", s, err)
				}
				return
			}
			var verr *ValidationError
			if !errors.As(err, &verr) || len(verr.Fields) != 1 || verr.Fields[0].Field != tt.field {
				t.Fatalf("Create = %v, want one invalid field %s", err, tt.field)
			}
		})
	}
}

func TestLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		store, obs := newMemStore(), &events{}
		m := newTestManager(t, store, Options{SessionTimeout: time.Minute, Observer: obs})
		as, err := m.CreateAudioSettings(ctx, "t1", validSettings())
		if err != nil {
			t.Fatal(err)
		}
		req := Request{AudioSettingsID: as.ID, AuthenticityThreshold: 0.5, AudioTotalDuration: 10, CallID: "call", ModelHash: m.Models()[0].Hash}
		s, err := m.Create(ctx, "t1", KindRegister, req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Create(ctx, "t1", KindRegister, req); !errors.Is(err, ErrConflict) {
			t.Fatalf("second live session for the call = %v, want ErrConflict", err)
		}
		if _, err := m.Create(ctx, "t2", KindRegister, req); err == nil {
			t.Fatal("a tenant used another tenant's audio settings")
		}
		if _, err := m.Get(ctx, "t1", KindVerify, s.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("register session read as verify = %v, want ErrNotFound", err)
		}
		if _, err := m.Get(ctx, "t2", KindRegister, s.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("other tenant's session = %v, want ErrNotFound", err)
		}

		time.Sleep(59 * time.Second)
		synctest.Wait()
		if got, _ := m.Get(ctx, "t1", KindRegister, s.ID); got.State != StateProcessingAudio {
			t.Fatalf("state before the timeout = %s", got.State)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		got, err := m.Get(ctx, "t1", KindRegister, s.ID)
		if err != nil || got.State != StateFailed || got.Failure == nil || got.Failure.Code != CodeNoAudio {
			t.Fatalf("after the timeout: %+v, %v", got, err)
		}
		if err := m.Cancel(ctx, "t1", KindRegister, s.ID); !errors.Is(err, ErrNotActive) {
			t.Errorf("cancel of a failed session = %v, want ErrNotActive", err)
		}

		// The call is free again; a cancelled session stops its timer.
		s2, err := m.Create(ctx, "t1", KindRegister, req)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Cancel(ctx, "t1", KindRegister, s2.ID); err != nil {
			t.Fatal(err)
		}
		got, _ = m.Get(ctx, "t1", KindRegister, s2.ID)
		if got.State != StateFailed || got.Failure.Code != CodeCancelled {
			t.Fatalf("cancelled session: %+v", got)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if got, _ := m.Get(ctx, "t1", KindRegister, s2.ID); got.Failure.Code != CodeCancelled {
			t.Errorf("the timer of a cancelled session fired: %+v", got.Failure)
		}
		if err := m.Cancel(ctx, "t1", KindRegister, "not-a-uuid"); !errors.Is(err, ErrNotFound) {
			t.Errorf("cancel of a malformed id = %v", err)
		}
		want := "register PROCESSING_AUDIO ; register FAILED NoAudio; register PROCESSING_AUDIO ; register FAILED Cancelled"
		if obs.String() != want {
			t.Errorf("observed %q, want %q", obs, want)
		}
	})
}

func TestResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		store := newMemStore()
		first := NewManager(store, voiceprint.NewRegistry(), Options{SessionTimeout: 10 * time.Minute}, zaptest.NewLogger(t))
		as, _ := first.CreateAudioSettings(ctx, "t1", validSettings())
		req := Request{AudioSettingsID: as.ID, AuthenticityThreshold: 0.5, AudioTotalDuration: 10, ModelHash: first.Models()[0].Hash}
		req.CallID = "old"
		old, _ := first.Create(ctx, "t1", KindRegister, req)
		time.Sleep(8 * time.Minute)
		req.CallID = "young"
		young, _ := first.Create(ctx, "t1", KindRegister, req)
		first.Close() // a restart: the timers die, the sessions stay live

		second := newTestManager(t, store, Options{SessionTimeout: 10 * time.Minute})
		if err := second.Resume(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2*time.Minute + time.Second)
		synctest.Wait()
		if s, _ := second.Get(ctx, "t1", KindRegister, old.ID); s.State != StateFailed {
			t.Errorf("old session after its deadline: %s", s.State)
		}
		if s, _ := second.Get(ctx, "t1", KindRegister, young.ID); s.State != StateProcessingAudio {
			t.Errorf("young session before its deadline: %s", s.State)
		}
		time.Sleep(8 * time.Minute)
		synctest.Wait()
		if s, _ := second.Get(ctx, "t1", KindRegister, young.ID); s.State != StateFailed {
			t.Errorf("young session after its deadline: %s", s.State)
		}
	})
}

func TestClosedManagerRefusesSessions(t *testing.T) {
	m := newTestManager(t, newMemStore(), Options{})
	as, _ := m.CreateAudioSettings(t.Context(), "t1", validSettings())
	m.Close()
	m.Close() // idempotent
	_, err := m.Create(t.Context(), "t1", KindRegister, Request{AudioSettingsID: as.ID, AuthenticityThreshold: 0.5,
		AudioTotalDuration: 10, CallID: "c", ModelHash: m.Models()[0].Hash})
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("Create after Close = %v, want ErrClosed", err)
	}
}

// TestProgressIsFlushedInOneBatch: every second the flusher writes the
// progress of all live sessions that changed, in one UpdateProgress, and
// nothing when nothing changed.
func TestProgressIsFlushedInOneBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		store := newMemStore()
		m := newTestManager(t, store, Options{SessionTimeout: time.Hour})
		as, err := m.CreateAudioSettings(ctx, "t1", validSettings())
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for i := range 3 {
			s, err := m.Create(ctx, "t1", KindRegister, Request{AudioSettingsID: as.ID, AuthenticityThreshold: 0.5,
				AudioTotalDuration: 10, CallID: fmt.Sprintf("call-%d", i), ModelHash: m.Models()[0].Hash})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, s.ID)
		}
		m.mu.Lock()
		for i, id := range ids[:2] {
			m.live[id].setProgress(Progress{AudioSeconds: float64(i + 1), VADPercentage: 50})
		}
		m.mu.Unlock()
		time.Sleep(DefaultFlushInterval)
		synctest.Wait()
		store.mu.Lock()
		batches := store.progressBatches
		p0, p2 := store.sessions[ids[0]].Progress, store.sessions[ids[2]].Progress
		store.mu.Unlock()
		if batches != 1 || p0 == nil || p0.AudioSeconds != 1 || p2 != nil {
			t.Fatalf("after a tick: %d batches, progress %+v and %+v; want one batch with the two changed", batches, p0, p2)
		}
		time.Sleep(DefaultFlushInterval)
		synctest.Wait()
		store.mu.Lock()
		defer store.mu.Unlock()
		if store.progressBatches != 1 {
			t.Errorf("%d batches after a tick with nothing new, want still 1", store.progressBatches)
		}
	})
}

// TestResumeAfterACrash: a session whose stream was cut by a crash (its
// claim belongs to the process that died) keeps its progress, waits
// StreamGrace for its call to reconnect, then fails StreamInterrupted; a
// session that only waited for its stream is timed as before.
func TestResumeAfterACrash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		store := newMemStore()
		first := NewManager(store, voiceprint.NewRegistry(), Options{ReplicaID: "first"}, zaptest.NewLogger(t))
		if err := first.Resume(ctx); err != nil {
			t.Fatal(err)
		}
		as, _ := first.CreateAudioSettings(ctx, "t1", validSettings())
		req := Request{AudioSettingsID: as.ID, AuthenticityThreshold: 0.5, AudioTotalDuration: 30, ModelHash: first.Models()[0].Hash}
		req.CallID = "fed"
		fed, _ := first.Create(ctx, "t1", KindRegister, req)
		req.CallID = "waiting"
		waiting, _ := first.Create(ctx, "t1", KindRegister, req)
		// A stream fed the first session 8 s of audio, then the process
		// died: its claim and progress are in the store, its lease stays.
		if err := store.ClaimSession(ctx, "t1", fed.ID, "first"); err != nil {
			t.Fatal(err)
		}
		p := fed
		p.Progress, p.Claim = &Progress{AudioSeconds: 8, VADPercentage: 70}, "first"
		store.UpdateProgress(ctx, []Session{p})
		first.cancel() // a crash: nothing more is written, not even Close's clean-up
		first.wg.Wait()
		first.mu.Lock()
		for _, l := range first.live {
			l.timer.Stop()
		}
		first.mu.Unlock()

		second := newTestManager(t, store, Options{ReplicaID: "second", SessionTimeout: time.Hour})
		if err := second.Resume(ctx); err != nil {
			t.Fatal(err)
		}
		s, _ := second.Get(ctx, "t1", KindRegister, fed.ID)
		if s.State != StateProcessingAudio || s.Progress == nil || s.Progress.AudioSeconds != 8 || s.Claim != "" || s.InterruptedAt.IsZero() {
			t.Fatalf("after the restart: %+v; want PROCESSING_AUDIO, interrupted, with its 8 s", s)
		}
		time.Sleep(DefaultStreamGrace - time.Second)
		synctest.Wait()
		if s, _ := second.Get(ctx, "t1", KindRegister, fed.ID); s.State != StateProcessingAudio {
			t.Fatalf("failed within the grace: %+v", s)
		}
		time.Sleep(DefaultLeaseTTL/5 + time.Second) // the grace and one pass of the maintainer
		synctest.Wait()
		s, _ = second.Get(ctx, "t1", KindRegister, fed.ID)
		if s.State != StateFailed || s.Failure.Code != CodeStreamInterrupted || s.Progress == nil || s.Progress.AudioSeconds != 8 {
			t.Fatalf("after the grace: %+v; want FAILED StreamInterrupted with its 8 s", s)
		}
		if s, _ := second.Get(ctx, "t1", KindRegister, waiting.ID); s.State != StateProcessingAudio {
			t.Errorf("the waiting session: %+v; want it still waiting", s.State)
		}
		// The call id is free again.
		req.CallID = "fed"
		if _, err := second.Create(ctx, "t1", KindRegister, req); err != nil {
			t.Errorf("a new session for the interrupted call: %v", err)
		}
	})
}
