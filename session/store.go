package session

import "context"

// Store is the persistence sessions need. Implementations must be safe for
// concurrent use and return this package's ErrNotFound, ErrConflict and
// ErrNotActive where the method says so.
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
	// stored session is still in PROCESSING_AUDIO, else returns
	// ErrNotActive (or ErrNotFound).
	UpdateSession(ctx context.Context, s Session) error
	// UpdateProgress writes the progress and updated time of sessions
	// still in PROCESSING_AUDIO, all at once (one transaction where the
	// store has them); a session no longer processing is left as it is.
	// An error means none, or only some, were written.
	UpdateProgress(ctx context.Context, ss []Session) error
	// ActiveSessions returns every session in PROCESSING_AUDIO.
	ActiveSessions(ctx context.Context) ([]Session, error)
}
