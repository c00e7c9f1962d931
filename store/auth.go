package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/earshot-voice/earshot/auth"
)

// keyCheckName is the sealed_secrets row that proves the master key.
const keyCheckName = "master-key-check"

var _ auth.Store = (*Store)(nil)

// Initialise implements auth.Store.
func (s *Store) Initialise(ctx context.Context, r auth.InitialRecords) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM sealed_secrets WHERE name = $1", keyCheckName).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return auth.ErrAlreadyInitialised
	}
	type exec struct {
		query string
		args  []any
	}
	execs := []exec{
		{"INSERT INTO tenants (id, created_at) VALUES ($1, $2)", []any{r.Tenant.ID, millis(r.Tenant.CreatedAt)}},
		{"INSERT INTO users (id, tenant_id, name, password_hash, created_at) VALUES ($1, $2, $3, $4, $5)",
			[]any{r.User.ID, r.User.TenantID, r.User.Name, r.User.PasswordHash, millis(r.User.CreatedAt)}},
		{"INSERT INTO admin_tokens (id, user_id, tenant_id, lookup, digest, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
			[]any{r.AdminToken.ID, r.AdminToken.UserID, r.AdminToken.TenantID, r.AdminToken.Lookup, r.AdminToken.Digest, millis(r.AdminToken.CreatedAt)}},
		{"INSERT INTO api_keys (id, tenant_id, service, role, name, lookup, digest, audiohook_secret, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
			[]any{r.APIKey.ID, r.APIKey.TenantID, r.APIKey.Service, r.APIKey.Role, r.APIKey.Name, r.APIKey.Lookup, r.APIKey.Digest, r.APIKey.AudioHookSecret, millis(r.APIKey.CreatedAt)}},
		{"INSERT INTO oauth_clients (id, tenant_id, digest, created_at) VALUES ($1, $2, $3, $4)",
			[]any{r.OAuthClient.ID, r.OAuthClient.TenantID, r.OAuthClient.Digest, millis(r.OAuthClient.CreatedAt)}},
		{"INSERT INTO sealed_secrets (name, value, created_at) VALUES ($1, $2, $3)",
			[]any{keyCheckName, r.KeyCheck, millis(r.Tenant.CreatedAt)}},
	}
	for _, e := range r.AllowList {
		execs = append(execs, exec{"INSERT INTO ip_allowlist (id, tenant_id, service, cidr, created_at) VALUES ($1, $2, $3, $4, $5)",
			[]any{e.ID, e.TenantID, e.Service, e.Prefix.String(), millis(e.CreatedAt)}})
	}
	for _, e := range execs {
		if _, err := tx.ExecContext(ctx, e.query, e.args...); err != nil {
			if isUniqueViolation(err) {
				return auth.ErrAlreadyInitialised // another replica won the race
			}
			return fmt.Errorf("store: initialising: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		if isUniqueViolation(err) {
			return auth.ErrAlreadyInitialised
		}
		return err
	}
	return nil
}

// KeyCheck implements auth.Store.
func (s *Store) KeyCheck(ctx context.Context) ([]byte, error) {
	var v []byte
	err := s.db.QueryRowContext(ctx, "SELECT value FROM sealed_secrets WHERE name = $1", keyCheckName).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, auth.ErrNotFound
	}
	return v, err
}

// APIKeyByLookup implements auth.Store.
func (s *Store) APIKeyByLookup(ctx context.Context, lookup string) (auth.APIKey, error) {
	var (
		k       auth.APIKey
		created int64
		revoked sql.NullInt64
	)
	err := s.queryRow(ctx, `SELECT id, tenant_id, service, role, name, lookup, digest, audiohook_secret, created_at, revoked_at
		FROM api_keys WHERE lookup = $1`, lookup).
		Scan(&k.ID, &k.TenantID, &k.Service, &k.Role, &k.Name, &k.Lookup, &k.Digest, &k.AudioHookSecret, &created, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return auth.APIKey{}, auth.ErrNotFound
	}
	if err != nil {
		return auth.APIKey{}, err
	}
	k.CreatedAt = fromMillis(created)
	k.Revoked = revoked.Valid
	return k, nil
}

// CreateTenant implements auth.Store.
func (s *Store) CreateTenant(ctx context.Context, t auth.Tenant) error {
	_, err := s.db.ExecContext(ctx, "INSERT INTO tenants (id, created_at) VALUES ($1, $2)", t.ID, millis(t.CreatedAt))
	return err
}

// CreateAPIKey implements auth.Store.
func (s *Store) CreateAPIKey(ctx context.Context, k auth.APIKey) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO api_keys (id, tenant_id, service, role, name, lookup, digest, audiohook_secret, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		k.ID, k.TenantID, k.Service, k.Role, k.Name, k.Lookup, k.Digest, k.AudioHookSecret, millis(k.CreatedAt))
	return err
}
