package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/earshot-voice/earshot/auth"
)

var (
	_ auth.AdminStore      = (*Store)(nil)
	_ auth.KeyAdminStore   = (*Store)(nil)
	_ auth.AllowListStore  = (*Store)(nil)
	_ auth.OAuthStore      = (*Store)(nil)
	_ auth.SigningKeyStore = (*Store)(nil)
)

// notFound maps sql.ErrNoRows to auth.ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return auth.ErrNotFound
	}
	return err
}

// conflict maps a unique violation to auth.ErrConflict.
func conflict(err error) error {
	if isUniqueViolation(err) {
		return auth.ErrConflict
	}
	return err
}

// affectedOne returns auth.ErrNotFound unless res changed a row.
func affectedOne(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return auth.ErrNotFound
	}
	return nil
}

// Tenant implements auth.AdminStore and auth.OAuthStore.
func (s *Store) Tenant(ctx context.Context, id string) (auth.Tenant, error) {
	var (
		t       auth.Tenant
		created int64
	)
	err := s.queryRow(ctx, "SELECT id, created_at FROM tenants WHERE id = $1", id).Scan(&t.ID, &created)
	if err != nil {
		return auth.Tenant{}, notFound(err)
	}
	t.CreatedAt = fromMillis(created)
	return t, nil
}

// Tenants implements auth.AdminStore.
func (s *Store) Tenants(ctx context.Context) ([]auth.Tenant, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT id, created_at FROM tenants ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []auth.Tenant
	for rows.Next() {
		var (
			t       auth.Tenant
			created int64
		)
		if err := rows.Scan(&t.ID, &created); err != nil {
			return nil, err
		}
		t.CreatedAt = fromMillis(created)
		out = append(out, t)
	}
	return out, rows.Err()
}

// AddTenant implements auth.AdminStore.
func (s *Store) AddTenant(ctx context.Context, t auth.Tenant) error {
	_, err := s.db.ExecContext(ctx, "INSERT INTO tenants (id, created_at) VALUES ($1, $2)", t.ID, millis(t.CreatedAt))
	return conflict(err)
}

// AdminTokenByLookup implements auth.AdminStore.
func (s *Store) AdminTokenByLookup(ctx context.Context, lookup string) (auth.AdminToken, error) {
	var (
		t       auth.AdminToken
		created int64
		revoked sql.NullInt64
	)
	err := s.queryRow(ctx, `SELECT id, user_id, tenant_id, lookup, digest, created_at, revoked_at
		FROM admin_tokens WHERE lookup = $1`, lookup).
		Scan(&t.ID, &t.UserID, &t.TenantID, &t.Lookup, &t.Digest, &created, &revoked)
	if err != nil {
		return auth.AdminToken{}, notFound(err)
	}
	t.CreatedAt, t.Revoked = fromMillis(created), revoked.Valid
	return t, nil
}

// User implements auth.AdminStore.
func (s *Store) User(ctx context.Context, id string) (auth.User, error) {
	var (
		u       auth.User
		created int64
	)
	err := s.db.QueryRowContext(ctx, "SELECT id, tenant_id, name, password_hash, created_at FROM users WHERE id = $1", id).
		Scan(&u.ID, &u.TenantID, &u.Name, &u.PasswordHash, &created)
	if err != nil {
		return auth.User{}, notFound(err)
	}
	u.CreatedAt = fromMillis(created)
	return u, nil
}

// SetPasswordHash implements auth.AdminStore.
func (s *Store) SetPasswordHash(ctx context.Context, userID, hash string) error {
	return affectedOne(s.db.ExecContext(ctx, "UPDATE users SET password_hash = $1 WHERE id = $2", hash, userID))
}

// ReplaceAdminToken implements auth.AdminStore.
func (s *Store) ReplaceAdminToken(ctx context.Context, t auth.AdminToken, at time.Time) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "UPDATE admin_tokens SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL",
			millis(at), t.UserID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO admin_tokens (id, user_id, tenant_id, lookup, digest, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, t.ID, t.UserID, t.TenantID, t.Lookup, t.Digest, millis(t.CreatedAt))
		return conflict(err)
	})
}

const apiKeyColumns = "id, tenant_id, service, role, name, lookup, digest, audiohook_secret, created_at, revoked_at"

func scanAPIKey(row rowScanner) (auth.APIKey, error) {
	var (
		k       auth.APIKey
		created int64
		revoked sql.NullInt64
	)
	if err := row.Scan(&k.ID, &k.TenantID, &k.Service, &k.Role, &k.Name, &k.Lookup, &k.Digest, &k.AudioHookSecret, &created, &revoked); err != nil {
		return auth.APIKey{}, err
	}
	k.CreatedAt, k.Revoked = fromMillis(created), revoked.Valid
	return k, nil
}

// APIKeys implements auth.KeyAdminStore.
func (s *Store) APIKeys(ctx context.Context, tenantID string) ([]auth.APIKey, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+apiKeyColumns+
		" FROM api_keys WHERE tenant_id = $1 AND revoked_at IS NULL ORDER BY created_at, id", tenantID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []auth.APIKey
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// APIKeyByID implements auth.KeyAdminStore.
func (s *Store) APIKeyByID(ctx context.Context, id string) (auth.APIKey, error) {
	k, err := scanAPIKey(s.db.QueryRowContext(ctx, "SELECT "+apiKeyColumns+" FROM api_keys WHERE id = $1", id))
	return k, notFound(err)
}

// RevokeAPIKey implements auth.KeyAdminStore.
func (s *Store) RevokeAPIKey(ctx context.Context, id string, at time.Time) error {
	return affectedOne(s.db.ExecContext(ctx, "UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL", millis(at), id))
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func allowEntries(ctx context.Context, q querier, tenantID string) ([]auth.AllowEntry, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, tenant_id, service, cidr, created_at FROM ip_allowlist
		WHERE tenant_id = $1 ORDER BY created_at, id`, tenantID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []auth.AllowEntry
	for rows.Next() {
		var (
			e       auth.AllowEntry
			cidr    string
			created int64
		)
		if err := rows.Scan(&e.ID, &e.TenantID, &e.Service, &cidr, &created); err != nil {
			return nil, err
		}
		if e.Prefix, err = netip.ParsePrefix(cidr); err != nil {
			return nil, fmt.Errorf("store: allow-list entry %s: %w", e.ID, err)
		}
		e.CreatedAt = fromMillis(created)
		out = append(out, e)
	}
	return out, rows.Err()
}

// AllowList implements auth.AllowListStore.
func (s *Store) AllowList(ctx context.Context, tenantID string) ([]auth.AllowEntry, error) {
	return allowEntries(ctx, s.db, tenantID)
}

// CreateAllowEntry implements auth.AllowListStore.
func (s *Store) CreateAllowEntry(ctx context.Context, e auth.AllowEntry) error {
	_, err := s.db.ExecContext(ctx, "INSERT INTO ip_allowlist (id, tenant_id, service, cidr, created_at) VALUES ($1, $2, $3, $4, $5)",
		e.ID, e.TenantID, e.Service, e.Prefix.String(), millis(e.CreatedAt))
	return conflict(err)
}

// DeleteAllowEntry implements auth.AllowListStore. Concurrent deletes of
// one tenant are serialised by updating the tenant's row first: PostgreSQL
// holds that row lock until the transaction ends, and SQLite transactions
// take the database's write lock when they begin.
func (s *Store) DeleteAllowEntry(ctx context.Context, id string, guard func(auth.AllowEntry, []auth.AllowEntry) error) (auth.AllowEntry, error) {
	var deleted auth.AllowEntry
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var tenantID string
		if err := tx.QueryRowContext(ctx, "SELECT tenant_id FROM ip_allowlist WHERE id = $1", id).Scan(&tenantID); err != nil {
			return notFound(err)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE tenants SET created_at = created_at WHERE id = $1", tenantID); err != nil {
			return err
		}
		all, err := allowEntries(ctx, tx, tenantID)
		if err != nil {
			return err
		}
		var others []auth.AllowEntry
		found := false
		for _, e := range all {
			if e.ID == id {
				deleted, found = e, true
			} else {
				others = append(others, e)
			}
		}
		if !found {
			return auth.ErrNotFound
		}
		if err := guard(deleted, others); err != nil {
			return err
		}
		return affectedOne(tx.ExecContext(ctx, "DELETE FROM ip_allowlist WHERE id = $1", id))
	})
	if err != nil {
		return auth.AllowEntry{}, err
	}
	return deleted, nil
}

// OAuthClient implements auth.OAuthStore.
func (s *Store) OAuthClient(ctx context.Context, id string) (auth.OAuthClient, error) {
	return scanOAuthClient(s.queryRow(ctx, "SELECT id, tenant_id, digest, created_at, revoked_at FROM oauth_clients WHERE id = $1", id))
}

func scanOAuthClient(row rowScanner) (auth.OAuthClient, error) {
	var (
		c       auth.OAuthClient
		created int64
		revoked sql.NullInt64
	)
	if err := row.Scan(&c.ID, &c.TenantID, &c.Digest, &created, &revoked); err != nil {
		return auth.OAuthClient{}, notFound(err)
	}
	c.CreatedAt, c.Revoked = fromMillis(created), revoked.Valid
	return c, nil
}

// OAuthClients implements auth.OAuthStore.
func (s *Store) OAuthClients(ctx context.Context, tenantID string) ([]auth.OAuthClient, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, tenant_id, digest, created_at, revoked_at FROM oauth_clients
		WHERE tenant_id = $1 AND revoked_at IS NULL ORDER BY created_at, id`, tenantID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []auth.OAuthClient
	for rows.Next() {
		c, err := scanOAuthClient(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// CreateOAuthClient implements auth.OAuthStore.
func (s *Store) CreateOAuthClient(ctx context.Context, c auth.OAuthClient) error {
	_, err := s.db.ExecContext(ctx, "INSERT INTO oauth_clients (id, tenant_id, digest, created_at) VALUES ($1, $2, $3, $4)",
		c.ID, c.TenantID, c.Digest, millis(c.CreatedAt))
	return conflict(err)
}

// RevokeOAuthClient implements auth.OAuthStore.
func (s *Store) RevokeOAuthClient(ctx context.Context, id string, at time.Time) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := affectedOne(tx.ExecContext(ctx, "UPDATE oauth_clients SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL",
			millis(at), id)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "UPDATE refresh_tokens SET revoked_at = $1 WHERE client_id = $2 AND revoked_at IS NULL", millis(at), id)
		return err
	})
}

const refreshInsert = `INSERT INTO refresh_tokens
	(id, tenant_id, client_id, family_id, lookup, digest, scope, created_at, expires_at, family_expires_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`

func refreshArgs(t auth.RefreshToken) []any {
	return []any{t.ID, t.TenantID, t.ClientID, t.FamilyID, t.Lookup, t.Digest, t.Scope,
		millis(t.CreatedAt), millis(t.ExpiresAt), millis(t.FamilyExpiresAt)}
}

// CreateRefreshToken implements auth.OAuthStore.
func (s *Store) CreateRefreshToken(ctx context.Context, t auth.RefreshToken) error {
	_, err := s.exec(ctx, refreshInsert, refreshArgs(t)...)
	return conflict(err)
}

// RefreshTokenByLookup implements auth.OAuthStore.
func (s *Store) RefreshTokenByLookup(ctx context.Context, lookup string) (auth.RefreshToken, error) {
	var (
		t                               auth.RefreshToken
		created, expires, familyExpires int64
		used, revoked                   sql.NullInt64
	)
	err := s.queryRow(ctx, `SELECT id, tenant_id, client_id, family_id, lookup, digest, scope, created_at, expires_at,
		family_expires_at, used_at, revoked_at FROM refresh_tokens WHERE lookup = $1`, lookup).
		Scan(&t.ID, &t.TenantID, &t.ClientID, &t.FamilyID, &t.Lookup, &t.Digest, &t.Scope, &created, &expires,
			&familyExpires, &used, &revoked)
	if err != nil {
		return auth.RefreshToken{}, notFound(err)
	}
	t.CreatedAt, t.ExpiresAt, t.FamilyExpiresAt = fromMillis(created), fromMillis(expires), fromMillis(familyExpires)
	t.Used, t.Revoked = used.Valid, revoked.Valid
	return t, nil
}

// RotateRefreshToken implements auth.OAuthStore. The conditional update
// decides which of two concurrent uses of one token wins: the loser
// changes no row.
func (s *Store) RotateRefreshToken(ctx context.Context, usedID string, at time.Time, next auth.RefreshToken) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		err := affectedOne(tx.ExecContext(ctx,
			"UPDATE refresh_tokens SET used_at = $1 WHERE id = $2 AND used_at IS NULL AND revoked_at IS NULL", millis(at), usedID))
		if errors.Is(err, auth.ErrNotFound) {
			return auth.ErrConflict
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, refreshInsert, refreshArgs(next)...)
		return conflict(err)
	})
}

// RevokeRefreshFamily implements auth.OAuthStore.
func (s *Store) RevokeRefreshFamily(ctx context.Context, familyID string, at time.Time) error {
	_, err := s.db.ExecContext(ctx, "UPDATE refresh_tokens SET revoked_at = $1 WHERE family_id = $2 AND revoked_at IS NULL",
		millis(at), familyID)
	return err
}

// RefreshFamilyRevoked implements auth.OAuthStore. Every access-token
// check runs it: one read of the family index.
func (s *Store) RefreshFamilyRevoked(ctx context.Context, familyID string) (bool, error) {
	var n int
	err := s.queryRow(ctx, "SELECT COUNT(*) FROM refresh_tokens WHERE family_id = $1 AND revoked_at IS NOT NULL", familyID).Scan(&n)
	return n > 0, err
}

// DeleteExpiredRefreshTokens implements auth.OAuthStore.
func (s *Store) DeleteExpiredRefreshTokens(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, "DELETE FROM refresh_tokens WHERE expires_at < $1", millis(before))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// SealedSecrets implements auth.SigningKeyStore.
func (s *Store) SealedSecrets(ctx context.Context, prefix string) ([]auth.SealedSecret, error) {
	escaped := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(prefix)
	rows, err := s.db.QueryContext(ctx, `SELECT name, value, created_at FROM sealed_secrets
		WHERE name LIKE $1 ESCAPE '\' ORDER BY name`, escaped+"%")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []auth.SealedSecret
	for rows.Next() {
		var (
			v       auth.SealedSecret
			created int64
		)
		if err := rows.Scan(&v.Name, &v.Value, &created); err != nil {
			return nil, err
		}
		v.CreatedAt = fromMillis(created)
		out = append(out, v)
	}
	return out, rows.Err()
}

// CreateSealedSecret implements auth.SigningKeyStore.
func (s *Store) CreateSealedSecret(ctx context.Context, v auth.SealedSecret) error {
	_, err := s.db.ExecContext(ctx, "INSERT INTO sealed_secrets (name, value, created_at) VALUES ($1, $2, $3)",
		v.Name, v.Value, millis(v.CreatedAt))
	return conflict(err)
}

// DeleteSealedSecret implements auth.SigningKeyStore.
func (s *Store) DeleteSealedSecret(ctx context.Context, name string) error {
	_, err := s.db.ExecContext(ctx, "DELETE FROM sealed_secrets WHERE name = $1", name)
	return err
}

// inTx runs f in a transaction, committing when it returns nil.
func (s *Store) inTx(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if err := f(tx); err != nil {
		return err
	}
	return conflict(tx.Commit())
}
