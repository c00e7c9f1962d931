package store

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/earshot-voice/earshot/auth"
	"github.com/earshot-voice/earshot/session"
)

// The embedded store when its disk is full or it turns read-only: every
// write fails with an error that says so (the service answers 500 or 503
// and the session manager retries terminal states), what was written
// before stays readable and intact, and writes work again once the fault
// is gone. SQLite's own limits stand in for the disk: max_page_count
// makes it report SQLITE_FULL exactly as a full disk does, query_only
// SQLITE_READONLY as a read-only file does.
func TestSQLiteFaults(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name         string
		fault, clear string // pragmas; fault may name the page count with %d
		want         string // in the write's error
	}{
		{"disk full", "PRAGMA max_page_count = %d", "PRAGMA max_page_count = 1073741823", "full"},
		{"read-only", "PRAGMA query_only = ON", "PRAGMA query_only = OFF", "readonly"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(t.Context(), "", t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := t.Context()
			if err := s.CreateTenant(ctx, auth.Tenant{ID: "default", CreatedAt: t0}); err != nil {
				t.Fatal(err)
			}
			as := session.AudioSettings{ID: "11111111-1111-4111-8111-111111111111", TenantID: "default", Protocol: "audiohook",
				Format: "raw", Codec: "mulaw", SampleRate: 8000, Channels: 1, CreatedAt: t0}
			if err := s.CreateAudioSettings(ctx, as); err != nil {
				t.Fatal(err)
			}
			newSession := func(i int) session.Session {
				return session.Session{ID: fmt.Sprintf("22222222-2222-4222-8222-%012d", i), TenantID: "default",
					Kind: session.KindRegister, AudioSettingsID: as.ID, AuthenticityThreshold: 0.5, AudioTotalDuration: 30,
					CallID: fmt.Sprintf("call-%d-%s", i, strings.Repeat("x", 100)), ModelHash: "abc",
					State: session.StateProcessingAudio, CreatedAt: t0, UpdatedAt: t0}
			}
			finished := newSession(0)
			if err := s.CreateSession(ctx, finished); err != nil {
				t.Fatal(err)
			}
			finished.State = session.StateSuccess
			finished.Result = &session.Result{Credential: "cred", Authenticity: 0.9, VoiceAudioCollected: 12}
			if err := s.UpdateSession(ctx, finished); err != nil {
				t.Fatal(err)
			}
			live := newSession(1)
			if err := s.CreateSession(ctx, live); err != nil {
				t.Fatal(err)
			}

			fault := tt.fault
			if strings.Contains(fault, "%d") {
				var pages int
				if err := s.db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
					t.Fatal(err)
				}
				fault = fmt.Sprintf(fault, pages)
			}
			if _, err := s.db.ExecContext(ctx, fault); err != nil {
				t.Fatal(err)
			}
			// Writes fail, each with an error that names the fault. (A
			// full database still fits rows in its pages' free space, so
			// keep writing until one does not.)
			var werr error
			for i := 2; i < 5000 && werr == nil; i++ {
				werr = s.CreateSession(ctx, newSession(i))
			}
			if werr == nil || !strings.Contains(strings.ToLower(werr.Error()), tt.want) {
				t.Fatalf("writes under the fault: %v, want an error saying %q", werr, tt.want)
			}
			ended := live
			ended.State = session.StateFailed
			ended.Failure = &session.Failure{Code: "Cancelled", Message: "cancelled"}
			// A terminal state may still fit in a full database's free
			// space; a read-only one takes none.
			pending := s.UpdateSession(ctx, ended) != nil
			if !pending && tt.name == "read-only" {
				t.Fatal("a terminal state was written to a read-only store")
			}
			// What was finished before is intact.
			if got, err := s.Session(ctx, "default", finished.ID); err != nil || got.State != session.StateSuccess ||
				got.Result == nil || got.Result.Credential != "cred" {
				t.Fatalf("finished session under the fault = %+v, %v", got, err)
			}

			if _, err := s.db.ExecContext(ctx, tt.clear); err != nil {
				t.Fatal(err)
			}
			// The retried terminal state now lands, and the file is sound.
			if pending {
				if err := s.UpdateSession(ctx, ended); err != nil {
					t.Fatalf("terminal state after the fault: %v", err)
				}
			}
			if got, err := s.Session(ctx, "default", live.ID); err != nil || got.State != session.StateFailed {
				t.Fatalf("session after the fault = %+v, %v", got, err)
			}
			var check string
			if err := s.db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
				t.Fatalf("integrity_check = %q, %v", check, err)
			}
		})
	}
}
