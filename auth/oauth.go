package auth

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"go.uber.org/zap"
)

// Lifetimes and limits of the identity provider.
const (
	// AccessTokenTTL is the validity of an access token (expires_in).
	AccessTokenTTL = 300 * time.Second
	// RefreshTokenTTL is the validity of one refresh token
	// (refresh_expires_in); each refresh issues a new one.
	RefreshTokenTTL = 30 * time.Minute
	// RefreshSessionTTL bounds a chain of refreshes: after it the client
	// must authenticate with the client-credentials grant again.
	RefreshSessionTTL = 10 * time.Hour
	// ClockSkew is the difference between the clocks of Earshot and its
	// clients that token checks tolerate.
	ClockSkew = 30 * time.Second
	// ScopeRoles is the scope clients ask for (spec 4.3) and are granted.
	ScopeRoles = "roles"

	prefixRefresh = "esr"
	// maxAccessTokenBytes bounds what Verify parses; our tokens are about
	// 700 bytes.
	maxAccessTokenBytes = 4096
	// refreshPurgeEvery is how often a replica deletes expired refresh
	// tokens.
	refreshPurgeEvery = 10 * time.Minute
)

// OAuth 2.0 error codes (RFC 6749 section 5.2).
const (
	OAuthInvalidRequest       = "invalid_request"
	OAuthInvalidClient        = "invalid_client"
	OAuthInvalidGrant         = "invalid_grant"
	OAuthUnsupportedGrantType = "unsupported_grant_type"
	OAuthInvalidScope         = "invalid_scope"
)

// OAuthError is a token-endpoint error of RFC 6749 section 5.2. Its
// Description is fit to show to the client.
type OAuthError struct {
	Code        string
	Description string
}

func (e *OAuthError) Error() string { return "auth: oauth " + e.Code + ": " + e.Description }

func oauthError(code, description string) *OAuthError {
	return &OAuthError{Code: code, Description: description}
}

// errInvalidClient is every client-authentication failure: unknown client,
// wrong secret, revoked client, client of another tenant. They are not
// told apart to the caller.
var errInvalidClient = oauthError(OAuthInvalidClient, "Invalid client or Invalid client credentials")

// IssuerOptions configure an Issuer.
type IssuerOptions struct {
	// PublicURL is the external base URL of the service; a tenant's issuer
	// is PublicURL + "/auth/realms/" + tenant. Required.
	PublicURL string
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Logger receives warnings. Default: no logs.
	Logger *zap.Logger
}

// Issuer is the OAuth 2.0 identity provider of the tenant-scoped interface:
// the client-credentials and refresh
// grants, the RS256 access tokens they issue, and the check of those
// tokens. Access tokens are JWTs that any replica can verify with the
// published keys. Refresh tokens are opaque, single-use and rotated:
// every refresh marks the presented token used and issues the next one of
// its chain; presenting a used token again revokes the whole chain (RFC
// 9700 section 4.14.2), as does revoking the client. It is safe for
// concurrent use.
type Issuer struct {
	store     OAuthStore
	keys      *SigningKeys
	hasher    *Hasher
	opts      IssuerOptions
	lastPurge atomic.Int64 // Unix ms of the last purge of expired refresh tokens
}

// NewIssuer returns an Issuer over store, signing with keys and hashing
// secrets with a key derived from mk.
func NewIssuer(store OAuthStore, keys *SigningKeys, mk MasterKey, opts IssuerOptions) *Issuer {
	opts.PublicURL = strings.TrimSuffix(opts.PublicURL, "/")
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	return &Issuer{store: store, keys: keys, hasher: NewHasher(mk), opts: opts}
}

// Keys returns the signing keys.
func (i *Issuer) Keys() *SigningKeys { return i.keys }

// IssuerURL returns the issuer (iss) of a tenant's tokens.
func (i *Issuer) IssuerURL(tenant string) string {
	return i.opts.PublicURL + "/auth/realms/" + tenant
}

// Tenant returns the tenant with that id, or ErrNotFound.
func (i *Issuer) Tenant(ctx context.Context, id string) (Tenant, error) {
	if !ValidTenantID(id) {
		return Tenant{}, ErrNotFound
	}
	return i.store.Tenant(ctx, id)
}

// Grant is a token response (spec 2.3) in Go form.
type Grant struct {
	AccessToken      string
	ExpiresIn        int // seconds
	RefreshToken     string
	RefreshExpiresIn int // seconds
	Scope            string
	SessionState     string // the refresh chain's id
}

// AccessClaims are the claims of an access token.
type AccessClaims struct {
	jwt.RegisteredClaims
	// AuthorizedParty (azp) is the client the token was issued to.
	AuthorizedParty string `json:"azp"`
	Tenant          string `json:"tenant"`
	Scope           string `json:"scope"`
	// SessionID (sid) is the refresh chain, also the session_state of the
	// token response.
	SessionID string `json:"sid,omitempty"`
	Type      string `json:"typ"`
}

// ClientCredentials runs the client-credentials grant (RFC 6749 section
// 4.4) for a client of tenant. Errors are *OAuthError, or a wrapped store
// error.
func (i *Issuer) ClientCredentials(ctx context.Context, tenant, clientID, secret, scope string) (Grant, error) {
	client, err := i.authenticateClient(ctx, tenant, clientID, secret)
	if err != nil {
		return Grant{}, err
	}
	granted, err := grantScope(scope, ScopeRoles, true)
	if err != nil {
		return Grant{}, err
	}
	now := i.now()
	next := i.newRefresh(client, uuid.NewString(), granted, now, now.Add(RefreshSessionTTL))
	if err := i.store.CreateRefreshToken(ctx, next.rec); err != nil {
		return Grant{}, fmt.Errorf("auth: storing refresh token: %w", err)
	}
	i.purge(ctx, now)
	return i.grant(ctx, client, next, now)
}

// Refresh runs the refresh grant (RFC 6749 section 6) for a client of
// tenant. Errors are *OAuthError, or a wrapped store error.
func (i *Issuer) Refresh(ctx context.Context, tenant, clientID, secret, refreshToken, scope string) (Grant, error) {
	client, err := i.authenticateClient(ctx, tenant, clientID, secret)
	if err != nil {
		return Grant{}, err
	}
	invalid := oauthError(OAuthInvalidGrant, "Invalid refresh token")
	lookup, ok := parseToken(prefixRefresh, refreshToken)
	if !ok {
		return Grant{}, invalid
	}
	rec, err := i.store.RefreshTokenByLookup(ctx, lookup)
	switch {
	case errors.Is(err, ErrNotFound):
		i.hasher.Equal(nil, refreshToken)
		return Grant{}, invalid
	case err != nil:
		return Grant{}, fmt.Errorf("auth: looking up refresh token: %w", err)
	}
	now := i.now()
	switch {
	case !i.hasher.Equal(rec.Digest, refreshToken), rec.ClientID != client.ID, rec.TenantID != tenant:
		return Grant{}, invalid
	case rec.Revoked:
		return Grant{}, oauthError(OAuthInvalidGrant, "Refresh token is not active")
	case rec.Used:
		i.revokeFamily(ctx, rec, now)
		return Grant{}, oauthError(OAuthInvalidGrant, "Refresh token was already used; its session is revoked")
	case !now.Before(rec.ExpiresAt):
		return Grant{}, oauthError(OAuthInvalidGrant, "Refresh token expired")
	}
	granted, err := grantScope(scope, rec.Scope, false)
	if err != nil {
		return Grant{}, err
	}
	next := i.newRefresh(client, rec.FamilyID, granted, now, rec.FamilyExpiresAt)
	if !next.rec.ExpiresAt.After(now) {
		return Grant{}, oauthError(OAuthInvalidGrant, "Refresh session expired")
	}
	err = i.store.RotateRefreshToken(ctx, rec.ID, now, next.rec)
	if errors.Is(err, ErrConflict) {
		// Another request used it first: one of the two holders is not the
		// client.
		i.revokeFamily(ctx, rec, now)
		return Grant{}, oauthError(OAuthInvalidGrant, "Refresh token was already used; its session is revoked")
	}
	if err != nil {
		return Grant{}, fmt.Errorf("auth: rotating refresh token: %w", err)
	}
	return i.grant(ctx, client, next, now)
}

func (i *Issuer) revokeFamily(ctx context.Context, rec RefreshToken, now time.Time) {
	if err := i.store.RevokeRefreshFamily(ctx, rec.FamilyID, now); err != nil {
		i.opts.Logger.Error("could not revoke a reused refresh token's session", zap.String("client_id", rec.ClientID), zap.Error(err))
	}
}

func (i *Issuer) now() time.Time { return i.opts.Now().UTC().Truncate(time.Millisecond) }

// authenticateClient checks a client's id and secret. Every failure is
// errInvalidClient.
func (i *Issuer) authenticateClient(ctx context.Context, tenant, clientID, secret string) (OAuthClient, error) {
	if clientID == "" || secret == "" || len(clientID) > 128 || len(secret) > 256 {
		return OAuthClient{}, errInvalidClient
	}
	c, err := i.store.OAuthClient(ctx, clientID)
	switch {
	case errors.Is(err, ErrNotFound):
		i.hasher.Equal(nil, secret)
		return OAuthClient{}, errInvalidClient
	case err != nil:
		return OAuthClient{}, fmt.Errorf("auth: looking up OAuth client: %w", err)
	}
	if !i.hasher.Equal(c.Digest, secret) || c.Revoked || c.TenantID != tenant {
		return OAuthClient{}, errInvalidClient
	}
	return c, nil
}

// grantScope returns the scope to grant for a requested one: every
// requested scope must be in allowed. An empty request is refused when
// required, and otherwise granted allowed (RFC 6749 section 6).
func grantScope(requested, allowed string, required bool) (string, error) {
	fields := strings.Fields(requested)
	if len(fields) == 0 {
		if required {
			return "", oauthError(OAuthInvalidScope, "scope is required; ask for scope="+ScopeRoles)
		}
		return allowed, nil
	}
	have := strings.Fields(allowed)
	var out []string
	for _, f := range fields {
		if !contains(have, f) {
			return "", oauthError(OAuthInvalidScope, fmt.Sprintf("scope %q is not available; ask for scope=%s", trim(f, 64), ScopeRoles))
		}
		if !contains(out, f) {
			out = append(out, f)
		}
	}
	return strings.Join(out, " "), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// trim shortens s for an error message.
func trim(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

type issuedRefresh struct {
	rec   RefreshToken
	token string
}

func (i *Issuer) newRefresh(c OAuthClient, family, scope string, now, familyExpires time.Time) issuedRefresh {
	token, lookup := newToken(prefixRefresh)
	expires := now.Add(RefreshTokenTTL)
	if familyExpires.Before(expires) {
		expires = familyExpires
	}
	return issuedRefresh{token: token, rec: RefreshToken{
		ID: uuid.NewString(), TenantID: c.TenantID, ClientID: c.ID, FamilyID: family, Lookup: lookup,
		Digest: i.hasher.Digest(token), Scope: scope, CreatedAt: now, ExpiresAt: expires, FamilyExpiresAt: familyExpires,
	}}
}

// grant signs the access token that goes with a new refresh token.
func (i *Issuer) grant(ctx context.Context, c OAuthClient, r issuedRefresh, now time.Time) (Grant, error) {
	key, err := i.keys.signer(ctx)
	if err != nil {
		return Grant{}, err
	}
	claims := AccessClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    i.IssuerURL(c.TenantID),
			Subject:   c.ID,
			ExpiresAt: jwt.NewNumericDate(now.Add(AccessTokenTTL)),
			IssuedAt:  jwt.NewNumericDate(now),
			ID:        uuid.NewString(),
		},
		AuthorizedParty: c.ID, Tenant: c.TenantID, Scope: r.rec.Scope, SessionID: r.rec.FamilyID, Type: "Bearer",
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = key.kid
	signed, err := tok.SignedString(key.private)
	if err != nil {
		return Grant{}, fmt.Errorf("auth: signing access token: %w", err)
	}
	return Grant{
		AccessToken: signed, ExpiresIn: int(AccessTokenTTL / time.Second),
		RefreshToken: r.token, RefreshExpiresIn: int(r.rec.ExpiresAt.Sub(now) / time.Second),
		Scope: r.rec.Scope, SessionState: r.rec.FamilyID,
	}, nil
}

// purge deletes expired refresh tokens, at most every refreshPurgeEvery.
// A failure is logged: expired tokens are refused whether deleted or not.
func (i *Issuer) purge(ctx context.Context, now time.Time) {
	last := i.lastPurge.Load()
	if now.UnixMilli()-last < refreshPurgeEvery.Milliseconds() || !i.lastPurge.CompareAndSwap(last, now.UnixMilli()) {
		return
	}
	if _, err := i.store.DeleteExpiredRefreshTokens(ctx, now); err != nil {
		i.opts.Logger.Warn("could not delete expired refresh tokens", zap.Error(err))
	}
}

// Verify checks an access token presented to tenant's API and returns its
// claims. The algorithm is pinned to RS256 and the key must be published;
// exp is required, exp, nbf and iat are checked with ClockSkew of
// tolerance; iss must be tenant's issuer and the tenant claim tenant; the
// client must still exist and not be revoked, and the token's refresh
// chain (sid) must not have been revoked.
//
// Errors: ErrTokenExpired and ErrWrongTenant for correctly signed tokens
// that are expired or another tenant's; ErrInvalidCredentials (possibly
// wrapped) for any other bad token; a store failure wrapped.
func (i *Issuer) Verify(ctx context.Context, tenant, raw string) (AccessClaims, error) {
	if raw == "" || len(raw) > maxAccessTokenBytes {
		return AccessClaims{}, ErrInvalidCredentials
	}
	parser := jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodRS256.Alg()}),
		jwt.WithLeeway(ClockSkew),
		jwt.WithTimeFunc(i.opts.Now),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithIssuer(i.IssuerURL(tenant)),
		jwt.WithStrictDecoding(),
	)
	var claims AccessClaims
	var storeErr error
	_, err := parser.ParseWithClaims(raw, &claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		if kid == "" {
			return nil, errUnknownKID
		}
		pub, err := i.keys.publicKey(ctx, kid)
		if err != nil && !errors.Is(err, errUnknownKID) {
			storeErr = err
		}
		return pub, err
	})
	switch {
	case storeErr != nil:
		return AccessClaims{}, storeErr
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable), errors.Is(err, jwt.ErrTokenMalformed):
		return AccessClaims{}, ErrInvalidCredentials
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		// Signed by us, for another tenant (the issuer names the tenant).
		return AccessClaims{}, ErrWrongTenant
	case errors.Is(err, jwt.ErrTokenExpired):
		return AccessClaims{}, ErrTokenExpired
	case err != nil:
		return AccessClaims{}, fmt.Errorf("%w: %v", ErrInvalidCredentials, err)
	}
	if claims.Tenant != tenant {
		return AccessClaims{}, ErrWrongTenant
	}
	c, err := i.store.OAuthClient(ctx, claims.AuthorizedParty)
	switch {
	case errors.Is(err, ErrNotFound):
		return AccessClaims{}, fmt.Errorf("%w: unknown client", ErrInvalidCredentials)
	case err != nil:
		return AccessClaims{}, fmt.Errorf("auth: looking up OAuth client: %w", err)
	case c.Revoked || c.TenantID != tenant:
		return AccessClaims{}, fmt.Errorf("%w: client revoked", ErrInvalidCredentials)
	}
	// A refresh token presented twice revokes its whole chain, the access
	// tokens issued along it included.
	if claims.SessionID == "" {
		return AccessClaims{}, fmt.Errorf("%w: no session", ErrInvalidCredentials)
	}
	revoked, err := i.store.RefreshFamilyRevoked(ctx, claims.SessionID)
	switch {
	case err != nil:
		return AccessClaims{}, fmt.Errorf("auth: looking up the token's session: %w", err)
	case revoked:
		return AccessClaims{}, fmt.Errorf("%w: session revoked", ErrInvalidCredentials)
	}
	return claims, nil
}

// Clients returns the active OAuth clients of a tenant.
func (i *Issuer) Clients(ctx context.Context, tenantID string) ([]OAuthClient, error) {
	return i.store.OAuthClients(ctx, tenantID)
}

// Client returns an active OAuth client, or ErrNotFound.
func (i *Issuer) Client(ctx context.Context, id string) (OAuthClient, error) {
	c, err := i.store.OAuthClient(ctx, id)
	if err == nil && c.Revoked {
		return OAuthClient{}, ErrNotFound
	}
	return c, err
}

// CreateClient creates an OAuth client of an existing tenant and returns
// it with its secret in the clear, to be shown once.
func (i *Issuer) CreateClient(ctx context.Context, tenantID string) (OAuthClient, string, error) {
	secret, _ := newToken(prefixOAuth)
	c := OAuthClient{ID: "earshot-" + hex.EncodeToString(randomBytes(6)), TenantID: tenantID,
		Digest: i.hasher.Digest(secret), CreatedAt: i.now()}
	if err := i.store.CreateOAuthClient(ctx, c); err != nil {
		return OAuthClient{}, "", fmt.Errorf("auth: storing OAuth client: %w", err)
	}
	return c, secret, nil
}

// RevokeClient revokes a client and every refresh token it holds, at once.
// Its access tokens fail Verify from the next request on. ErrNotFound if
// there is no such active client.
func (i *Issuer) RevokeClient(ctx context.Context, id string) error {
	return i.store.RevokeOAuthClient(ctx, id, i.now())
}
