package session

import (
	"context"
	"errors"
	"time"

	"github.com/sony/gobreaker/v2"
)

// breakerStore is the circuit breaker around the store (DESIGN.md 5):
// after repeated failures it opens for a while and every call fails at
// once with ErrUnavailable instead of waiting on a sick database.
//
// Policy: fail fast (closed to callers) while open. REST reads and writes
// answer 503 at once; on the audio path nothing is lost, because calls
// keep streaming, progress stays in memory, and the flusher retries
// terminal states until the store takes them. Answers that are part of
// the contract (not found, conflict, not active) count as successes.
type breakerStore struct {
	Store
	cb *gobreaker.CircuitBreaker[any]
}

func newBreakerStore(s Store) *breakerStore {
	return &breakerStore{Store: s, cb: gobreaker.NewCircuitBreaker[any](gobreaker.Settings{
		Name:    "store",
		Timeout: 5 * time.Second, // open this long, then let one request probe
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.ConsecutiveFailures >= 5
		},
		IsSuccessful: func(err error) bool {
			return err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) ||
				errors.Is(err, ErrNotActive)
		},
		IsExcluded: func(err error) bool {
			return errors.Is(err, context.Canceled) // the caller left; says nothing of the store
		},
	})}
}

func (b *breakerStore) do(f func() error) error {
	_, err := b.cb.Execute(func() (any, error) { return nil, f() })
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return ErrUnavailable
	}
	return err
}

func (b *breakerStore) CreateAudioSettings(ctx context.Context, s AudioSettings) error {
	return b.do(func() error { return b.Store.CreateAudioSettings(ctx, s) })
}

func (b *breakerStore) AudioSettings(ctx context.Context, tenantID, id string) (a AudioSettings, err error) {
	err = b.do(func() (e error) { a, e = b.Store.AudioSettings(ctx, tenantID, id); return e })
	return a, err
}

func (b *breakerStore) CreateSession(ctx context.Context, s Session) error {
	return b.do(func() error { return b.Store.CreateSession(ctx, s) })
}

func (b *breakerStore) Session(ctx context.Context, tenantID, id string) (s Session, err error) {
	err = b.do(func() (e error) { s, e = b.Store.Session(ctx, tenantID, id); return e })
	return s, err
}

func (b *breakerStore) UpdateSession(ctx context.Context, s Session) error {
	return b.do(func() error { return b.Store.UpdateSession(ctx, s) })
}

func (b *breakerStore) UpdateProgress(ctx context.Context, ss []Session) error {
	return b.do(func() error { return b.Store.UpdateProgress(ctx, ss) })
}

func (b *breakerStore) ActiveSessions(ctx context.Context) (s []Session, err error) {
	err = b.do(func() (e error) { s, e = b.Store.ActiveSessions(ctx); return e })
	return s, err
}
