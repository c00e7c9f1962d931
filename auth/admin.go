package auth

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// AdminPrincipal is the caller an admin token authenticates: the admin
// user of a home tenant. Its token works on every management endpoint, for
// every tenant and service.
type AdminPrincipal struct {
	UserID   string
	TenantID string // the user's home tenant
	TokenID  string
}

// Admin authenticates admin tokens, changes the admin password, rotates
// the admin token and keeps the list of tenants. It is safe for concurrent
// use.
type Admin struct {
	store  AdminStore
	hasher *Hasher
	now    func() time.Time
	// passwords bounds concurrent Argon2id computations: each takes 64 MiB,
	// so unbounded concurrent password checks would be a memory attack.
	passwords chan struct{}
}

// maxPasswordChecks is how many Argon2id computations run at once.
const maxPasswordChecks = 2

// NewAdmin returns an Admin over store, hashing with keys derived from mk.
func NewAdmin(store AdminStore, mk MasterKey) *Admin {
	return &Admin{store: store, hasher: NewHasher(mk), now: time.Now, passwords: make(chan struct{}, maxPasswordChecks)}
}

// Authenticate returns the principal of an admin token. Every failure
// (absent, malformed, unknown, wrong, revoked) is ErrInvalidCredentials; a
// store failure is returned wrapped.
func (a *Admin) Authenticate(ctx context.Context, token string) (AdminPrincipal, error) {
	lookup, ok := parseToken(prefixAdminToken, token)
	if !ok {
		return AdminPrincipal{}, ErrInvalidCredentials
	}
	rec, err := a.store.AdminTokenByLookup(ctx, lookup)
	switch {
	case errors.Is(err, ErrNotFound):
		a.hasher.Equal(nil, token) // same work as a found token
		return AdminPrincipal{}, ErrInvalidCredentials
	case err != nil:
		return AdminPrincipal{}, fmt.Errorf("auth: looking up admin token: %w", err)
	}
	if !a.hasher.Equal(rec.Digest, token) || rec.Revoked {
		return AdminPrincipal{}, ErrInvalidCredentials
	}
	return AdminPrincipal{UserID: rec.UserID, TenantID: rec.TenantID, TokenID: rec.ID}, nil
}

// IsAdminToken reports whether s has the shape of an admin token. It
// checks the shape only.
func IsAdminToken(s string) bool {
	_, ok := parseToken(prefixAdminToken, s)
	return ok
}

// CredentialKey returns the rate-limit key of a presented API key, admin
// token or OAuth secret: its public lookup part, so that failures against
// one credential count together. It returns "" for a string of no known
// shape, whose failures count against the client address only.
func CredentialKey(token string) string {
	for _, prefix := range []string{prefixAPIKey, prefixAdminToken, prefixRefresh} {
		if lookup, ok := parseToken(prefix, token); ok {
			return "cred:" + prefix + "_" + lookup
		}
	}
	return ""
}

// checkPassword verifies a user's password, at most maxPasswordChecks at
// a time. A wrong password is ErrInvalidCredentials.
func (a *Admin) checkPassword(ctx context.Context, userID, password string) error {
	u, err := a.store.User(ctx, userID)
	if err != nil {
		return fmt.Errorf("auth: reading user: %w", err)
	}
	if len(password) > maxPasswordBytes {
		return ErrInvalidCredentials
	}
	var ok bool
	if err := a.withPasswordSlot(ctx, func() { ok = CheckPassword(u.PasswordHash, password) }); err != nil {
		return err
	}
	if !ok {
		return ErrInvalidCredentials
	}
	return nil
}

func (a *Admin) withPasswordSlot(ctx context.Context, f func()) error {
	select {
	case a.passwords <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-a.passwords }()
	f()
	return nil
}

// Bounds of a new admin password.
const (
	minPasswordRunes = 12
	maxPasswordBytes = 1024
)

// ChangePassword replaces the password of p's user with next after
// checking current. Errors: ErrInvalidCredentials for a wrong current
// password, ErrWeakPassword for a next one out of bounds.
func (a *Admin) ChangePassword(ctx context.Context, p AdminPrincipal, current, next string) error {
	if utf8.RuneCountInString(next) < minPasswordRunes || len(next) > maxPasswordBytes || !utf8.ValidString(next) {
		return ErrWeakPassword
	}
	if err := a.checkPassword(ctx, p.UserID, current); err != nil {
		return err
	}
	var hash string
	if err := a.withPasswordSlot(ctx, func() { hash = HashPassword(next) }); err != nil {
		return err
	}
	if err := a.store.SetPasswordHash(ctx, p.UserID, hash); err != nil {
		return fmt.Errorf("auth: storing password: %w", err)
	}
	return nil
}

// RotateToken issues a new admin token for p's user after checking the
// user's password, and revokes the user's other tokens at once. The new
// token is returned in the clear, to be shown once. A wrong password is
// ErrInvalidCredentials.
func (a *Admin) RotateToken(ctx context.Context, p AdminPrincipal, password string) (string, error) {
	if err := a.checkPassword(ctx, p.UserID, password); err != nil {
		return "", err
	}
	token, lookup := newToken(prefixAdminToken)
	now := a.now().UTC().Truncate(time.Millisecond)
	rec := AdminToken{ID: uuid.NewString(), UserID: p.UserID, TenantID: p.TenantID, Lookup: lookup,
		Digest: a.hasher.Digest(token), CreatedAt: now}
	if err := a.store.ReplaceAdminToken(ctx, rec, now); err != nil {
		return "", fmt.Errorf("auth: storing admin token: %w", err)
	}
	return token, nil
}

// validTenantID admits tenant ids fit for a URL path segment, an issuer URL
// and a header value.
var validTenantID = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// ValidTenantID reports whether id may name a tenant: 1 to 63 lower-case
// letters, digits and hyphens, not starting with a hyphen.
func ValidTenantID(id string) bool { return validTenantID.MatchString(id) }

// Tenant returns the tenant with that id, or ErrNotFound.
func (a *Admin) Tenant(ctx context.Context, id string) (Tenant, error) {
	if !ValidTenantID(id) {
		return Tenant{}, ErrNotFound
	}
	return a.store.Tenant(ctx, id)
}

// Tenants returns every tenant.
func (a *Admin) Tenants(ctx context.Context) ([]Tenant, error) { return a.store.Tenants(ctx) }

// CreateTenant creates a tenant. Errors: ErrConflict when it exists.
// Callers validate id with ValidTenantID first.
func (a *Admin) CreateTenant(ctx context.Context, id string) (Tenant, error) {
	t := Tenant{ID: strings.TrimSpace(id), CreatedAt: a.now().UTC().Truncate(time.Millisecond)}
	if err := a.store.AddTenant(ctx, t); err != nil {
		return Tenant{}, err
	}
	return t, nil
}
