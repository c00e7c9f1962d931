package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/earshot-voice/earshot/session"
)

var _ session.Store = (*Store)(nil)

// CreateAudioSettings implements session.Store.
func (s *Store) CreateAudioSettings(ctx context.Context, a session.AudioSettings) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO audio_settings
		(id, tenant_id, protocol, format, codec, sample_format, sample_rate, channels, channel, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		a.ID, a.TenantID, a.Protocol, a.Format, a.Codec, a.SampleFormat, a.SampleRate, a.Channels, a.Channel, millis(a.CreatedAt))
	return err
}

// AudioSettings implements session.Store.
func (s *Store) AudioSettings(ctx context.Context, tenantID, id string) (session.AudioSettings, error) {
	var (
		a       session.AudioSettings
		created int64
	)
	err := s.queryRow(ctx, `SELECT id, tenant_id, protocol, format, codec, sample_format, sample_rate, channels, channel, created_at
		FROM audio_settings WHERE id = $1 AND tenant_id = $2`, id, tenantID).
		Scan(&a.ID, &a.TenantID, &a.Protocol, &a.Format, &a.Codec, &a.SampleFormat, &a.SampleRate, &a.Channels, &a.Channel, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return session.AudioSettings{}, session.ErrNotFound
	}
	a.CreatedAt = fromMillis(created)
	return a, err
}

// CreateSession implements session.Store.
func (s *Store) CreateSession(ctx context.Context, r session.Session) error {
	var credential sql.NullString
	if r.Credential != "" {
		credential = sql.NullString{String: r.Credential, Valid: true}
	}
	var similarity sql.NullFloat64
	if r.SimilarityThreshold != nil {
		similarity = sql.NullFloat64{Float64: *r.SimilarityThreshold, Valid: true}
	}
	_, err := s.exec(ctx, `INSERT INTO sessions
		(id, tenant_id, kind, audio_settings_id, authenticity_threshold, audio_total_duration, call_id, model_hash, state,
		 created_at, updated_at, credential_in, similarity_threshold)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		r.ID, r.TenantID, string(r.Kind), r.AudioSettingsID, r.AuthenticityThreshold, r.AudioTotalDuration,
		r.CallID, r.ModelHash, string(r.State), millis(r.CreatedAt), millis(r.UpdatedAt), credential, similarity)
	if isUniqueViolation(err) {
		return session.ErrConflict
	}
	return err
}

const sessionColumns = `id, tenant_id, kind, audio_settings_id, authenticity_threshold, audio_total_duration, call_id, model_hash,
	state, created_at, updated_at, audio_seconds, vad_percentage, credential, authenticity, voice_audio_collected, error_code, error_message,
	credential_in, similarity_threshold, score, decision, replica_id, interrupted_at`

// Session implements session.Store.
func (s *Store) Session(ctx context.Context, tenantID, id string) (session.Session, error) {
	row := s.queryRow(ctx, "SELECT "+sessionColumns+" FROM sessions WHERE id = $1 AND tenant_id = $2", id, tenantID)
	r, err := scanSession(row)
	if errors.Is(err, sql.ErrNoRows) {
		return session.Session{}, session.ErrNotFound
	}
	return r, err
}

// UpdateSession implements session.Store.
func (s *Store) UpdateSession(ctx context.Context, r session.Session) error {
	audioSeconds, vad := progressColumns(r.Progress)
	var (
		authenticity, voice, score          sql.NullFloat64
		credential, code, message, decision sql.NullString
	)
	if res := r.Result; res != nil {
		credential = sql.NullString{String: res.Credential, Valid: true}
		authenticity = sql.NullFloat64{Float64: res.Authenticity, Valid: true}
		voice = sql.NullFloat64{Float64: res.VoiceAudioCollected, Valid: true}
		if res.Score != nil {
			score = sql.NullFloat64{Float64: *res.Score, Valid: true}
			decision = sql.NullString{String: string(res.Decision), Valid: true}
		}
	}
	if f := r.Failure; f != nil {
		code = sql.NullString{String: string(f.Code), Valid: true}
		message = sql.NullString{String: f.Message, Valid: true}
	}
	res, err := s.exec(ctx, `UPDATE sessions SET state = $1, updated_at = $2, audio_seconds = $3, vad_percentage = $4,
		credential = $5, authenticity = $6, voice_audio_collected = $7, error_code = $8, error_message = $9,
		score = $10, decision = $11
		WHERE id = $12 AND tenant_id = $13 AND state = $14 AND COALESCE(replica_id, '') = $15`,
		string(r.State), millis(r.UpdatedAt), audioSeconds, vad, credential, authenticity, voice, code, message,
		score, decision, r.ID, r.TenantID, string(session.StateProcessingAudio), r.Claim)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	cur, err := s.Session(ctx, r.TenantID, r.ID)
	switch {
	case err != nil:
		return err
	case cur.State != session.StateProcessingAudio:
		return session.ErrNotActive
	}
	return session.ErrConflict
}

// progressColumns are the audio_seconds and vad_percentage of p, NULL
// before the first frame.
func progressColumns(p *session.Progress) (audioSeconds, vad sql.NullFloat64) {
	if p == nil {
		return
	}
	return sql.NullFloat64{Float64: p.AudioSeconds, Valid: true}, sql.NullFloat64{Float64: p.VADPercentage, Valid: true}
}

// progressUpdate writes a live session's progress; a session no longer
// processing matches no row.
const progressUpdate = `UPDATE sessions SET updated_at = $1, audio_seconds = $2, vad_percentage = $3
	WHERE id = $4 AND tenant_id = $5 AND state = $6 AND COALESCE(replica_id, '') = $7`

// UpdateProgress implements session.Store: one transaction for the batch.
func (s *Store) UpdateProgress(ctx context.Context, ss []session.Session) ([]string, error) {
	if len(ss) == 0 {
		return nil, nil
	}
	// Prepared before the transaction: with SQLite's one connection, the
	// transaction holds it and preparing inside would wait for ever.
	st, err := s.prepared(ctx, progressUpdate)
	if err != nil {
		return nil, err
	}
	var stale []string
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		stale = stale[:0]
		txst := tx.StmtContext(ctx, st)
		defer txst.Close()
		for _, r := range ss {
			audioSeconds, vad := progressColumns(r.Progress)
			res, err := txst.ExecContext(ctx, millis(r.UpdatedAt), audioSeconds, vad, r.ID, r.TenantID,
				string(session.StateProcessingAudio), r.Claim)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				stale = append(stale, r.ID)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return stale, nil
}

// ClaimSession implements session.Store.
func (s *Store) ClaimSession(ctx context.Context, tenantID, id, replica string) error {
	res, err := s.exec(ctx, `UPDATE sessions SET replica_id = $1, interrupted_at = NULL
		WHERE id = $2 AND tenant_id = $3 AND state = $4 AND (replica_id IS NULL OR replica_id = $1)`,
		replica, id, tenantID, string(session.StateProcessingAudio))
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	cur, err := s.Session(ctx, tenantID, id)
	switch {
	case err != nil:
		return err
	case cur.State != session.StateProcessingAudio:
		return session.ErrNotActive
	}
	return session.ErrConflict
}

// LiveSession implements session.Store.
func (s *Store) LiveSession(ctx context.Context, tenantID, callID string) (session.Session, error) {
	row := s.queryRow(ctx, "SELECT "+sessionColumns+" FROM sessions WHERE tenant_id = $1 AND call_id = $2 AND state = $3",
		tenantID, callID, string(session.StateProcessingAudio))
	r, err := scanSession(row)
	if errors.Is(err, sql.ErrNoRows) {
		return session.Session{}, session.ErrNotFound
	}
	return r, err
}

// WaitingSessions implements session.Store.
func (s *Store) WaitingSessions(ctx context.Context) ([]session.Session, error) {
	return s.sessions(ctx, "SELECT "+sessionColumns+" FROM sessions WHERE state = $1 AND replica_id IS NULL",
		string(session.StateProcessingAudio))
}

// FailInterrupted implements session.Store.
func (s *Store) FailInterrupted(ctx context.Context, before time.Time, f session.Failure, at time.Time) ([]session.Session, error) {
	return s.sessions(ctx, `UPDATE sessions SET state = $1, error_code = $2, error_message = $3, updated_at = $4
		WHERE state = $5 AND replica_id IS NULL AND interrupted_at IS NOT NULL AND interrupted_at <= $6
		RETURNING `+sessionColumns,
		string(session.StateFailed), string(f.Code), f.Message, millis(at), string(session.StateProcessingAudio), millis(before))
}

// ActiveSessions implements session.Store.
func (s *Store) ActiveSessions(ctx context.Context) ([]session.Session, error) {
	return s.sessions(ctx, "SELECT "+sessionColumns+" FROM sessions WHERE state = $1", string(session.StateProcessingAudio))
}

// sessions runs a query (or a statement with RETURNING) of sessions.
func (s *Store) sessions(ctx context.Context, query string, args ...any) ([]session.Session, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []session.Session
	for rows.Next() {
		r, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func scanSession(row rowScanner) (session.Session, error) {
	var (
		r                                                  session.Session
		kind, state                                        string
		created, updated                                   int64
		audioSeconds, vad, authenticity, voice, sim, score sql.NullFloat64
		credential, code, message, credIn, decision        sql.NullString
		replica                                            sql.NullString
		interrupted                                        sql.NullInt64
	)
	err := row.Scan(&r.ID, &r.TenantID, &kind, &r.AudioSettingsID, &r.AuthenticityThreshold, &r.AudioTotalDuration,
		&r.CallID, &r.ModelHash, &state, &created, &updated, &audioSeconds, &vad, &credential, &authenticity, &voice, &code, &message,
		&credIn, &sim, &score, &decision, &replica, &interrupted)
	if err != nil {
		return session.Session{}, err
	}
	r.Kind, r.State = session.Kind(kind), session.State(state)
	r.CreatedAt, r.UpdatedAt = fromMillis(created), fromMillis(updated)
	if audioSeconds.Valid {
		r.Progress = &session.Progress{AudioSeconds: audioSeconds.Float64, VADPercentage: vad.Float64}
	}
	r.Credential = credIn.String
	r.Claim = replica.String
	if interrupted.Valid {
		r.InterruptedAt = fromMillis(interrupted.Int64)
	}
	if sim.Valid {
		r.SimilarityThreshold = &sim.Float64
	}
	if credential.Valid || score.Valid {
		r.Result = &session.Result{Credential: credential.String, Authenticity: authenticity.Float64, VoiceAudioCollected: voice.Float64}
		if score.Valid {
			r.Result.Score, r.Result.Decision = &score.Float64, session.Decision(decision.String)
		}
	}
	if code.Valid {
		r.Failure = &session.Failure{Code: session.ErrorCode(code.String), Message: message.String}
	}
	return r, nil
}
