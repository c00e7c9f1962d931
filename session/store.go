package session

import (
	"context"
	"time"
)

// Store is the persistence sessions need. Implementations must be safe for
// concurrent use and return this package's ErrNotFound, ErrConflict and
// ErrNotActive where the method says so.
//
// Several replicas may share one store. A live session's claim names the
// replica whose stream feeds it (Session.Claim); the store only writes a
// session's state or progress for the writer that names the current claim,
// so a replica that lost its claim cannot overwrite another's work.
type Store interface {
	// CreateAudioSettings stores new audio settings.
	CreateAudioSettings(ctx context.Context, s AudioSettings) error
	// AudioSettings returns the tenant's audio settings with that id, or
	// ErrNotFound.
	AudioSettings(ctx context.Context, tenantID, id string) (AudioSettings, error)
	// CreateSession stores a new session in PROCESSING_AUDIO. It returns
	// ErrConflict when the tenant has another session for the same call id
	// in PROCESSING_AUDIO.
	CreateSession(ctx context.Context, s Session) error
	// Session returns the tenant's session with that id, or ErrNotFound.
	Session(ctx context.Context, tenantID, id string) (Session, error)
	// UpdateSession writes s's state, progress, result and failure if the
	// stored session is still in PROCESSING_AUDIO and its claim is
	// s.Claim. It returns ErrNotActive when the session has ended,
	// ErrConflict when the claim differs, or ErrNotFound.
	UpdateSession(ctx context.Context, s Session) error
	// UpdateProgress writes the progress and updated time of sessions
	// still in PROCESSING_AUDIO whose claim is theirs, all at once (one
	// transaction where the store has them). It returns the ids of the
	// sessions it left as they were (ended, or claimed by another). An
	// error means none, or only some, were written.
	UpdateProgress(ctx context.Context, ss []Session) (stale []string, err error)
	// ActiveSessions returns every session in PROCESSING_AUDIO.
	ActiveSessions(ctx context.Context) ([]Session, error)

	// ClaimSession records that replica's stream feeds the session and
	// clears its interruption. It succeeds when the session is in
	// PROCESSING_AUDIO with no claim or replica's own; it returns
	// ErrConflict when another replica holds it, ErrNotActive when it
	// ended, or ErrNotFound.
	ClaimSession(ctx context.Context, tenantID, id, replica string) error
	// LiveSession returns the tenant's session in PROCESSING_AUDIO for
	// the call, or ErrNotFound.
	LiveSession(ctx context.Context, tenantID, callID string) (Session, error)
	// WaitingSessions returns the sessions in PROCESSING_AUDIO that no
	// stream feeds (no claim).
	WaitingSessions(ctx context.Context) ([]Session, error)
	// FailInterrupted ends, with f, every session in PROCESSING_AUDIO
	// without a claim that was interrupted at or before before, keeping
	// its progress, and returns them as they now are.
	FailInterrupted(ctx context.Context, before time.Time, f Failure, at time.Time) ([]Session, error)

	// Heartbeat writes replica's lease: it is alive at time at.
	Heartbeat(ctx context.Context, replica string, at time.Time) error
	// RemoveReplica deletes replica's lease (a clean stop).
	RemoveReplica(ctx context.Context, replica string) error
	// ExpireReplicas deletes the leases, other than keep's, last written
	// before staleBefore, and returns how many it deleted.
	ExpireReplicas(ctx context.Context, staleBefore time.Time, keep string) (int, error)
	// ReleaseClaims clears the claims of live sessions held by replicas
	// that have no lease, marking those sessions interrupted at at, and
	// returns how many it released.
	ReleaseClaims(ctx context.Context, at time.Time) (int, error)
}
