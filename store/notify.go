package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// notifyChannel is the PostgreSQL channel replicas tell each other of
// session changes on.
const notifyChannel = "earshot_sessions"

// MaxNotifyPayload bounds a notification's payload (PostgreSQL's limit
// is 8000 bytes).
const MaxNotifyPayload = 7000

// Shared reports whether other processes may use the database at the same
// time: true for PostgreSQL. The embedded SQLite store belongs to one
// process.
func (s *Store) Shared() bool { return s.backend == BackendPostgres }

// Notify sends payload to every replica listening on the database,
// this one included. On SQLite it does nothing: one process uses it.
func (s *Store) Notify(ctx context.Context, payload string) error {
	if s.backend != BackendPostgres {
		return nil
	}
	if len(payload) > MaxNotifyPayload {
		return fmt.Errorf("store: notification of %d bytes", len(payload))
	}
	_, err := s.exec(ctx, "SELECT pg_notify($1, $2)", notifyChannel, payload)
	return err
}

// Listen receives the notifications of Notify on a connection of its own
// and hands each payload to handle, in order, on Listen's goroutine, until
// ctx is cancelled (it then returns nil) or the connection fails (it
// returns the error; call it again to reconnect). connected is called
// once listening has begun. On SQLite it blocks until ctx is cancelled.
func (s *Store) Listen(ctx context.Context, connected func(), handle func(payload string)) error {
	if s.backend != BackendPostgres {
		<-ctx.Done()
		return nil
	}
	conn, err := pgx.ConnectConfig(ctx, s.pgCfg.Copy())
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("store: listening: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("store: listening: %w", err)
	}
	connected()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("store: listening: %w", err)
		}
		handle(n.Payload)
	}
}
