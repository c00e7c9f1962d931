package store

import (
	"context"
	"time"

	"github.com/earshot-voice/earshot/session"
)

// Heartbeat implements session.Store: the replica's lease row, inserted
// the first time.
func (s *Store) Heartbeat(ctx context.Context, replica string, at time.Time) error {
	_, err := s.exec(ctx, `INSERT INTO replicas (id, started_at, heartbeat_at) VALUES ($1, $2, $2)
		ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`, replica, millis(at))
	return err
}

// RemoveReplica implements session.Store.
func (s *Store) RemoveReplica(ctx context.Context, replica string) error {
	_, err := s.db.ExecContext(ctx, "DELETE FROM replicas WHERE id = $1", replica)
	return err
}

// ExpireReplicas implements session.Store. Each expired row is deleted by
// one replica only, so each dead replica is counted once.
func (s *Store) ExpireReplicas(ctx context.Context, staleBefore time.Time, keep string) (int, error) {
	res, err := s.exec(ctx, "DELETE FROM replicas WHERE heartbeat_at < $1 AND id <> $2", millis(staleBefore), keep)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// ReleaseClaims implements session.Store.
func (s *Store) ReleaseClaims(ctx context.Context, at time.Time) (int, error) {
	res, err := s.exec(ctx, `UPDATE sessions SET replica_id = NULL, interrupted_at = $1
		WHERE state = $2 AND replica_id IS NOT NULL AND replica_id NOT IN (SELECT id FROM replicas)`,
		millis(at), string(session.StateProcessingAudio))
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
