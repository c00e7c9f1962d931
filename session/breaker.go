package session

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/sony/gobreaker/v2"
)

// breakerStore is the circuit breaker around the store:
// after repeated failures it opens for a while and every call fails at
// once with ErrUnavailable instead of waiting on a sick database.
//
// Policy: fail fast (closed to callers) while open. REST reads and writes
// answer 503 at once; on the audio path nothing is lost, because calls
// keep streaming, progress stays in memory, and the flusher retries
// claims and terminal states until the store takes them. Answers that are
// part of the contract (not found, conflict, not active) count as
// successes. A failure to reach the database (refused or broken
// connection) is reported as ErrUnavailable too, wrapping the cause, so
// that the first requests of an outage answer 503 like the later ones.
//
// Every operation is timed and reported to the Observer under a fixed
// name, with the breaker's state changes.
type breakerStore struct {
	Store
	cb  *gobreaker.CircuitBreaker[any]
	obs Observer
}

// Breaker settings.
const (
	breakerTrips   = 5               // consecutive failures that open it
	breakerTimeout = 5 * time.Second // open this long, then let one request probe
)

func newBreakerStore(s Store, obs Observer) *breakerStore {
	b := &breakerStore{Store: s, obs: obs}
	b.cb = gobreaker.NewCircuitBreaker[any](gobreaker.Settings{
		Name:    "store",
		Timeout: breakerTimeout,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.ConsecutiveFailures >= breakerTrips
		},
		IsSuccessful: func(err error) bool { return err == nil || contractAnswer(err) },
		IsExcluded: func(err error) bool {
			return errors.Is(err, context.Canceled) // the caller left; says nothing of the store
		},
		OnStateChange: func(_ string, _, to gobreaker.State) { obs.BreakerState(breakerStateValue(to)) },
	})
	obs.BreakerState(0)
	return b
}

// breakerStateValue is the metric's value of a state: 0 closed, 1
// half-open, 2 open.
func breakerStateValue(s gobreaker.State) int {
	switch s {
	case gobreaker.StateHalfOpen:
		return 1
	case gobreaker.StateOpen:
		return 2
	}
	return 0
}

// available returns ErrUnavailable while the breaker is open.
func (b *breakerStore) available() error {
	if b.cb.State() == gobreaker.StateOpen {
		return ErrUnavailable
	}
	return nil
}

// guard runs f, an operation on the store named op, through the breaker.
func (b *breakerStore) guard(op string, f func() error) error {
	ran := false
	var elapsed time.Duration
	_, err := b.cb.Execute(func() (any, error) {
		ran = true
		start := time.Now()
		err := f()
		elapsed = time.Since(start)
		return nil, err
	})
	switch {
	case errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests):
		err = ErrUnavailable
	case err != nil && !errors.Is(err, ErrUnavailable) && unreachable(err):
		err = fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if ran || err != nil {
		b.obs.StoreCall(op, elapsed, err != nil && !contractAnswer(err) && !errors.Is(err, context.Canceled))
	}
	return err
}

// unreachable reports whether err says the database could not be reached
// (as opposed to an answer it gave).
func unreachable(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, context.DeadlineExceeded)
}

func (b *breakerStore) CreateAudioSettings(ctx context.Context, s AudioSettings) error {
	return b.guard("create_audio_settings", func() error { return b.Store.CreateAudioSettings(ctx, s) })
}

func (b *breakerStore) AudioSettings(ctx context.Context, tenantID, id string) (a AudioSettings, err error) {
	err = b.guard("audio_settings", func() (e error) { a, e = b.Store.AudioSettings(ctx, tenantID, id); return e })
	return a, err
}

func (b *breakerStore) CreateSession(ctx context.Context, s Session) error {
	return b.guard("create_session", func() error { return b.Store.CreateSession(ctx, s) })
}

func (b *breakerStore) Session(ctx context.Context, tenantID, id string) (s Session, err error) {
	err = b.guard("session", func() (e error) { s, e = b.Store.Session(ctx, tenantID, id); return e })
	return s, err
}

func (b *breakerStore) UpdateSession(ctx context.Context, s Session) error {
	return b.guard("update_session", func() error { return b.Store.UpdateSession(ctx, s) })
}

func (b *breakerStore) UpdateProgress(ctx context.Context, ss []Session) (stale []string, err error) {
	err = b.guard("update_progress", func() (e error) { stale, e = b.Store.UpdateProgress(ctx, ss); return e })
	return stale, err
}

func (b *breakerStore) ActiveSessions(ctx context.Context) (s []Session, err error) {
	err = b.guard("active_sessions", func() (e error) { s, e = b.Store.ActiveSessions(ctx); return e })
	return s, err
}

func (b *breakerStore) ClaimSession(ctx context.Context, tenantID, id, replica string) error {
	return b.guard("claim_session", func() error { return b.Store.ClaimSession(ctx, tenantID, id, replica) })
}

func (b *breakerStore) LiveSession(ctx context.Context, tenantID, callID string) (s Session, err error) {
	err = b.guard("live_session", func() (e error) { s, e = b.Store.LiveSession(ctx, tenantID, callID); return e })
	return s, err
}

func (b *breakerStore) WaitingSessions(ctx context.Context) (s []Session, err error) {
	err = b.guard("waiting_sessions", func() (e error) { s, e = b.Store.WaitingSessions(ctx); return e })
	return s, err
}

func (b *breakerStore) FailInterrupted(ctx context.Context, before time.Time, f Failure, at time.Time) (s []Session, err error) {
	err = b.guard("fail_interrupted", func() (e error) { s, e = b.Store.FailInterrupted(ctx, before, f, at); return e })
	return s, err
}

func (b *breakerStore) Heartbeat(ctx context.Context, replica string, at time.Time) error {
	return b.guard("heartbeat", func() error { return b.Store.Heartbeat(ctx, replica, at) })
}

func (b *breakerStore) RemoveReplica(ctx context.Context, replica string) error {
	return b.guard("remove_replica", func() error { return b.Store.RemoveReplica(ctx, replica) })
}

func (b *breakerStore) ExpireReplicas(ctx context.Context, staleBefore time.Time, keep string) (n int, err error) {
	err = b.guard("expire_replicas", func() (e error) { n, e = b.Store.ExpireReplicas(ctx, staleBefore, keep); return e })
	return n, err
}

func (b *breakerStore) ReleaseClaims(ctx context.Context, at time.Time) (n int, err error) {
	err = b.guard("release_claims", func() (e error) { n, e = b.Store.ReleaseClaims(ctx, at); return e })
	return n, err
}
