package store_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/earshot-voice/earshot/auth"
	"github.com/earshot-voice/earshot/session"
	"github.com/earshot-voice/earshot/store"
)

// testDatabaseEnv names the PostgreSQL URL the PostgreSQL tests use. When
// it is set, an unreachable database fails the tests; when it is not, they
// are skipped.
const testDatabaseEnv = "EARSHOT_TEST_DATABASE_URL"

// backends opens a fresh store per back end: SQLite in a temp dir, and
// PostgreSQL in a throwaway schema when EARSHOT_TEST_DATABASE_URL is set.
func forEachBackend(t *testing.T, f func(t *testing.T, open func() *store.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		f(t, func() *store.Store { return openStore(t, "", dir) })
	})
	t.Run("postgres", func(t *testing.T) {
		u := postgresSchema(t)
		f(t, func() *store.Store { return openStore(t, u, "") })
	})
}

func openStore(t *testing.T, databaseURL, dir string) *store.Store {
	t.Helper()
	s, err := store.Open(t.Context(), databaseURL, dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// postgresSchema creates an empty schema and returns a database URL whose
// search_path is that schema. The schema is dropped after the test.
func postgresSchema(t *testing.T) string {
	t.Helper()
	base := os.Getenv(testDatabaseEnv)
	if base == "" {
		t.Skip(testDatabaseEnv + " is not set; skipping the PostgreSQL tests")
	}
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("%s: %v", testDatabaseEnv, err)
	}
	t.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("%s is set but PostgreSQL is unreachable: %v", testDatabaseEnv, err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	schema := "earshot_test_" + hex.EncodeToString(b)
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("creating schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := db.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", testDatabaseEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func initialRecords() auth.InitialRecords {
	return auth.InitialRecords{
		Tenant:      auth.Tenant{ID: "default", CreatedAt: t0},
		User:        auth.User{ID: "u1", TenantID: "default", Name: "admin", PasswordHash: "$argon2id$x", CreatedAt: t0},
		AdminToken:  auth.AdminToken{ID: "t1", UserID: "u1", TenantID: "default", Lookup: "tok", Digest: []byte{1}, CreatedAt: t0},
		APIKey:      auth.APIKey{ID: "k1", TenantID: "default", Service: "streaming", Role: "admin", Name: "b", Lookup: "lk1", Digest: []byte{2, 3}, AudioHookSecret: []byte{9, 9}, CreatedAt: t0},
		OAuthClient: auth.OAuthClient{ID: "c1", TenantID: "default", Digest: []byte{4}, CreatedAt: t0},
		AllowList:   []auth.AllowEntry{{ID: "a1", TenantID: "default", Service: "streaming", Prefix: netip.MustParsePrefix("127.0.0.0/8"), CreatedAt: t0}},
		KeyCheck:    []byte("sealed"),
	}
}

func TestMigrationsAreIdempotent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func() *store.Store) {
		first := open()
		if err := first.Initialise(t.Context(), initialRecords()); err != nil {
			t.Fatal(err)
		}
		second := open() // migrates again: must apply nothing and keep data
		if _, err := second.KeyCheck(t.Context()); err != nil {
			t.Fatalf("KeyCheck after reopening: %v", err)
		}
	})
}

func TestOpenRejectsUnknownURL(t *testing.T) {
	for _, u := range []string{"mysql://x", "sqlite:///tmp/x.db", "x"} {
		if _, err := store.Open(t.Context(), u, t.TempDir()); !errors.Is(err, store.ErrUnsupportedURL) {
			t.Errorf("Open(%q) = %v, want ErrUnsupportedURL", u, err)
		}
	}
}

func TestSQLiteFileIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s := openStore(t, "", dir)
	// A write, so that the -wal and -shm files exist.
	if err := s.CreateTenant(t.Context(), auth.Tenant{ID: "t", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	want := map[string]os.FileMode{dir: 0o700}
	for _, f := range []string{"earshot.db", "earshot.db-wal", "earshot.db-shm"} {
		want[filepath.Join(dir, f)] = 0o600
	}
	checkModes := func(t *testing.T) {
		t.Helper()
		for path, mode := range want {
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != mode {
				t.Errorf("%s: mode %v, want %v", filepath.Base(path), st.Mode().Perm(), mode)
			}
		}
	}
	checkModes(t)

	// Files an older version left readable by others are tightened at the
	// next open.
	s.Close()
	for path, mode := range want {
		if mode == 0o600 {
			if err := os.Chmod(path, 0o644); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
	}
	s = openStore(t, "", dir)
	if err := s.CreateTenant(t.Context(), auth.Tenant{ID: "u", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	checkModes(t)
}

func TestAuthRecords(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func() *store.Store) {
		s, ctx := open(), t.Context()
		if _, err := s.KeyCheck(ctx); !errors.Is(err, auth.ErrNotFound) {
			t.Fatalf("KeyCheck on empty store = %v, want ErrNotFound", err)
		}
		recs := initialRecords()
		if err := s.Initialise(ctx, recs); err != nil {
			t.Fatal(err)
		}
		if err := s.Initialise(ctx, recs); !errors.Is(err, auth.ErrAlreadyInitialised) {
			t.Fatalf("second Initialise = %v, want ErrAlreadyInitialised", err)
		}
		check, err := s.KeyCheck(ctx)
		if err != nil || string(check) != "sealed" {
			t.Fatalf("KeyCheck = %q, %v", check, err)
		}
		k, err := s.APIKeyByLookup(ctx, "lk1")
		if err != nil {
			t.Fatal(err)
		}
		want := recs.APIKey
		if k.ID != want.ID || k.TenantID != want.TenantID || k.Service != want.Service || k.Role != want.Role ||
			string(k.Digest) != string(want.Digest) || string(k.AudioHookSecret) != string(want.AudioHookSecret) ||
			!k.CreatedAt.Equal(want.CreatedAt) || k.Revoked {
			t.Errorf("APIKeyByLookup = %+v, want %+v", k, want)
		}
		if _, err := s.APIKeyByLookup(ctx, "nope"); !errors.Is(err, auth.ErrNotFound) {
			t.Errorf("unknown lookup = %v, want ErrNotFound", err)
		}
		if err := s.CreateTenant(ctx, auth.Tenant{ID: "other", CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		k2 := auth.APIKey{ID: "k2", TenantID: "other", Service: "streaming", Role: "user", Lookup: "lk2", Digest: []byte{5}, CreatedAt: t0}
		if err := s.CreateAPIKey(ctx, k2); err != nil {
			t.Fatal(err)
		}
		if got, err := s.APIKeyByLookup(ctx, "lk2"); err != nil || got.AudioHookSecret != nil || got.TenantID != "other" {
			t.Errorf("key without hook secret = %+v, %v", got, err)
		}
		if err := s.CreateAPIKey(ctx, auth.APIKey{ID: "k3", TenantID: "missing", Service: "streaming", Role: "user", Lookup: "lk3", Digest: []byte{5}, CreatedAt: t0}); err == nil {
			t.Error("CreateAPIKey for a missing tenant succeeded")
		}
	})
}

func TestSessionRecords(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func() *store.Store) {
		s, ctx := open(), t.Context()
		if err := s.Initialise(ctx, initialRecords()); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateTenant(ctx, auth.Tenant{ID: "other", CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		as := session.AudioSettings{ID: "11111111-1111-4111-8111-111111111111", TenantID: "default", Protocol: "audiohook",
			Format: "raw", Codec: "mulaw", SampleRate: 8000, Channels: 2, Channel: "internal", CreatedAt: t0}
		if err := s.CreateAudioSettings(ctx, as); err != nil {
			t.Fatal(err)
		}
		got, err := s.AudioSettings(ctx, "default", as.ID)
		if err != nil || got != as {
			t.Fatalf("AudioSettings = %+v, %v; want %+v", got, err, as)
		}
		if _, err := s.AudioSettings(ctx, "other", as.ID); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("other tenant's settings = %v, want ErrNotFound", err)
		}

		live := session.Session{ID: "22222222-2222-4222-8222-222222222222", TenantID: "default", Kind: session.KindRegister,
			AudioSettingsID: as.ID, AuthenticityThreshold: 0.8, AudioTotalDuration: 30.5, CallID: "call-1",
			ModelHash: "abc", State: session.StateProcessingAudio, CreatedAt: t0, UpdatedAt: t0}
		if err := s.CreateSession(ctx, live); err != nil {
			t.Fatal(err)
		}
		dup := live
		dup.ID = "33333333-3333-4333-8333-333333333333"
		if err := s.CreateSession(ctx, dup); !errors.Is(err, session.ErrConflict) {
			t.Fatalf("second live session for the call = %v, want ErrConflict", err)
		}
		if got, err := s.Session(ctx, "default", live.ID); err != nil || got.CallID != "call-1" || got.Progress != nil || got.Result != nil || got.Failure != nil {
			t.Fatalf("Session = %+v, %v", got, err)
		}
		if _, err := s.Session(ctx, "other", live.ID); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("other tenant's session = %v, want ErrNotFound", err)
		}

		progress := live
		progress.Progress = &session.Progress{AudioSeconds: 1.5, VADPercentage: 42.5}
		progress.UpdatedAt = t0.Add(time.Second)
		if err := s.UpdateSession(ctx, progress); err != nil {
			t.Fatal(err)
		}
		done := progress
		done.State = session.StateSuccess
		done.Result = &session.Result{Credential: "cred", Authenticity: 0.9, VoiceAudioCollected: 12.25}
		if err := s.UpdateSession(ctx, done); err != nil {
			t.Fatal(err)
		}
		read, err := s.Session(ctx, "default", live.ID)
		if err != nil {
			t.Fatal(err)
		}
		if read.State != session.StateSuccess || *read.Progress != *done.Progress || *read.Result != *done.Result ||
			!read.UpdatedAt.Equal(done.UpdatedAt) || !read.CreatedAt.Equal(t0) {
			t.Errorf("after success: %+v", read)
		}
		failed := done
		failed.State, failed.Failure = session.StateFailed, &session.Failure{Code: session.CodeCancelled, Message: "x"}
		if err := s.UpdateSession(ctx, failed); !errors.Is(err, session.ErrNotActive) {
			t.Errorf("update of a finished session = %v, want ErrNotActive", err)
		}
		missing := failed
		missing.ID = "44444444-4444-4444-8444-444444444444"
		if err := s.UpdateSession(ctx, missing); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("update of a missing session = %v, want ErrNotFound", err)
		}
		// The call is free again once its session ended.
		if err := s.CreateSession(ctx, dup); err != nil {
			t.Fatalf("new session after the first ended: %v", err)
		}
		active, err := s.ActiveSessions(ctx)
		if err != nil || len(active) != 1 || active[0].ID != dup.ID {
			t.Errorf("ActiveSessions = %+v, %v", active, err)
		}
	})
}

// TestUpdateProgress writes a batch of progress in one call: live
// sessions take it, a finished one and an unknown id are left alone.
func TestUpdateProgress(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func() *store.Store) {
		s, ctx := open(), t.Context()
		if err := s.Initialise(ctx, initialRecords()); err != nil {
			t.Fatal(err)
		}
		as := session.AudioSettings{ID: "11111111-1111-4111-8111-111111111111", TenantID: "default", Protocol: "audiohook",
			Format: "raw", Codec: "mulaw", SampleRate: 8000, Channels: 1, Channel: "external", CreatedAt: t0}
		if err := s.CreateAudioSettings(ctx, as); err != nil {
			t.Fatal(err)
		}
		ids := []string{"22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333", "44444444-4444-4444-8444-444444444444"}
		var sessions []session.Session
		for i, id := range ids {
			r := session.Session{ID: id, TenantID: "default", Kind: session.KindRegister, AudioSettingsID: as.ID,
				AuthenticityThreshold: 0.8, AudioTotalDuration: 30, CallID: fmt.Sprintf("call-%d", i), ModelHash: "abc",
				State: session.StateProcessingAudio, CreatedAt: t0, UpdatedAt: t0}
			if err := s.CreateSession(ctx, r); err != nil {
				t.Fatal(err)
			}
			sessions = append(sessions, r)
		}
		done := sessions[2]
		done.State, done.Result = session.StateSuccess, &session.Result{Credential: "cred", Authenticity: 1, VoiceAudioCollected: 9}
		done.Progress, done.UpdatedAt = &session.Progress{AudioSeconds: 30, VADPercentage: 50}, t0.Add(time.Minute)
		if err := s.UpdateSession(ctx, done); err != nil {
			t.Fatal(err)
		}
		batch := make([]session.Session, 0, 4)
		for i, r := range sessions {
			r.Progress, r.UpdatedAt = &session.Progress{AudioSeconds: float64(i + 1), VADPercentage: 10 * float64(i+1)}, t0.Add(2*time.Minute)
			batch = append(batch, r)
		}
		unknown := batch[0]
		unknown.ID = "55555555-5555-4555-8555-555555555555"
		batch = append(batch, unknown)
		stale, err := s.UpdateProgress(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(stale, []string{ids[2], unknown.ID}) {
			t.Errorf("stale = %v, want the finished session and the unknown id", stale)
		}
		for i, id := range ids[:2] {
			got, err := s.Session(ctx, "default", id)
			if err != nil || got.Progress == nil || *got.Progress != *batch[i].Progress || !got.UpdatedAt.Equal(t0.Add(2*time.Minute)) ||
				got.State != session.StateProcessingAudio {
				t.Errorf("session %d after the batch: %+v, %v", i, got, err)
			}
		}
		got, err := s.Session(ctx, "default", ids[2])
		if err != nil || *got.Progress != *done.Progress || got.State != session.StateSuccess || !got.UpdatedAt.Equal(done.UpdatedAt) {
			t.Errorf("finished session after the batch: %+v, %v", got, err)
		}
		if _, err := s.UpdateProgress(ctx, nil); err != nil {
			t.Errorf("empty batch: %v", err)
		}
	})
}

// TestClaimsAndLeases: a claim is exclusive and guards writes; a dead
// replica's claims are released (the session interrupted, its progress
// kept) and, after the grace, fail with the given failure.
func TestClaimsAndLeases(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func() *store.Store) {
		s, ctx := open(), t.Context()
		if err := s.Initialise(ctx, initialRecords()); err != nil {
			t.Fatal(err)
		}
		as := session.AudioSettings{ID: "11111111-1111-4111-8111-111111111111", TenantID: "default", Protocol: "audiohook",
			Format: "raw", Codec: "mulaw", SampleRate: 8000, Channels: 1, Channel: "external", CreatedAt: t0}
		if err := s.CreateAudioSettings(ctx, as); err != nil {
			t.Fatal(err)
		}
		r := session.Session{ID: "22222222-2222-4222-8222-222222222222", TenantID: "default", Kind: session.KindRegister,
			AudioSettingsID: as.ID, AuthenticityThreshold: 0.8, AudioTotalDuration: 30, CallID: "call", ModelHash: "abc",
			State: session.StateProcessingAudio, CreatedAt: t0, UpdatedAt: t0}
		if err := s.CreateSession(ctx, r); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"a", "b"} {
			if err := s.Heartbeat(ctx, id, t0); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := s.LiveSession(ctx, "default", "call"); err != nil || got.ID != r.ID {
			t.Fatalf("live session of the call: %+v, %v", got, err)
		}
		if w, err := s.WaitingSessions(ctx); err != nil || len(w) != 1 {
			t.Fatalf("waiting before the claim: %d, %v", len(w), err)
		}
		if err := s.ClaimSession(ctx, "default", r.ID, "a"); err != nil {
			t.Fatal(err)
		}
		if err := s.ClaimSession(ctx, "default", r.ID, "a"); err != nil {
			t.Errorf("claiming again for the holder: %v", err)
		}
		if err := s.ClaimSession(ctx, "default", r.ID, "b"); !errors.Is(err, session.ErrConflict) {
			t.Errorf("claim by another replica = %v, want ErrConflict", err)
		}
		if w, _ := s.WaitingSessions(ctx); len(w) != 0 {
			t.Errorf("a claimed session is waiting")
		}
		p := r
		p.Progress, p.Claim = &session.Progress{AudioSeconds: 8, VADPercentage: 60}, "a"
		if stale, err := s.UpdateProgress(ctx, []session.Session{p}); err != nil || len(stale) != 0 {
			t.Fatalf("progress of the holder: %v %v", stale, err)
		}
		noAudio := r
		noAudio.State, noAudio.Failure = session.StateFailed, &session.Failure{Code: session.CodeNoAudio, Message: "x"}
		if err := s.UpdateSession(ctx, noAudio); !errors.Is(err, session.ErrConflict) {
			t.Errorf("a write naming no claim = %v, want ErrConflict", err)
		}
		// Replica a dies: b expires its lease and releases its claims.
		if err := s.Heartbeat(ctx, "b", t0.Add(20*time.Second)); err != nil {
			t.Fatal(err)
		}
		if n, err := s.ExpireReplicas(ctx, t0.Add(10*time.Second), "b"); err != nil || n != 1 {
			t.Fatalf("expired %d, %v; want a", n, err)
		}
		if n, err := s.ReleaseClaims(ctx, t0.Add(21*time.Second)); err != nil || n != 1 {
			t.Fatalf("released %d, %v", n, err)
		}
		got, err := s.Session(ctx, "default", r.ID)
		if err != nil || got.Claim != "" || !got.InterruptedAt.Equal(t0.Add(21*time.Second)) || got.Progress == nil || got.Progress.AudioSeconds != 8 {
			t.Fatalf("after the release: %+v, %v", got, err)
		}
		f := session.Failure{Code: session.CodeStreamInterrupted, Message: "cut"}
		if failed, err := s.FailInterrupted(ctx, t0.Add(20*time.Second), f, t0.Add(25*time.Second)); err != nil || len(failed) != 0 {
			t.Fatalf("failed within the grace: %d, %v", len(failed), err)
		}
		failed, err := s.FailInterrupted(ctx, t0.Add(31*time.Second), f, t0.Add(31*time.Second))
		if err != nil || len(failed) != 1 || failed[0].State != session.StateFailed || failed[0].Failure.Code != session.CodeStreamInterrupted ||
			failed[0].Progress == nil || failed[0].Progress.AudioSeconds != 8 {
			t.Fatalf("after the grace: %+v, %v", failed, err)
		}
		if _, err := s.LiveSession(ctx, "default", "call"); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("live session of the call after it ended = %v, want ErrNotFound", err)
		}
		if err := s.ClaimSession(ctx, "default", r.ID, "b"); !errors.Is(err, session.ErrNotActive) {
			t.Errorf("claim of an ended session = %v, want ErrNotActive", err)
		}
		if err := s.RemoveReplica(ctx, "b"); err != nil {
			t.Error(err)
		}
	})
}

// TestNotifyReachesListeners: on PostgreSQL, a payload sent with Notify
// reaches a Listen of another store on the same database; Listen returns
// nil when its context ends. SQLite's store is not shared and Notify does
// nothing.
func TestNotifyReachesListeners(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		s := openStore(t, "", t.TempDir())
		if s.Shared() || s.Notify(t.Context(), "x") != nil {
			t.Error("the embedded store claims to be shared, or Notify failed")
		}
	})
	t.Run("postgres", func(t *testing.T) {
		u := postgresSchema(t)
		sender, receiver := openStore(t, u, ""), openStore(t, u, "")
		if !sender.Shared() {
			t.Fatal("PostgreSQL store is not shared")
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		connected, got := make(chan struct{}), make(chan string, 4)
		done := make(chan error, 1)
		go func() {
			done <- receiver.Listen(ctx, func() { close(connected) }, func(p string) { got <- p })
		}()
		<-connected
		payload := `{"e":"created","t":"default","c":"call-1"}`
		if err := sender.Notify(t.Context(), payload); err != nil {
			t.Fatal(err)
		}
		if p := <-got; p != payload {
			t.Errorf("received %q, want %q", p, payload)
		}
		if err := sender.Notify(t.Context(), strings.Repeat("x", store.MaxNotifyPayload+1)); err == nil {
			t.Error("an oversized payload was sent")
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Listen after its context ended = %v, want nil", err)
		}
	})
}
