package auth

import (
	"context"
	"net/netip"
	"time"
)

// Roles of API keys.
const (
	// RoleAdmin may use its service's interfaces and manage its service's
	// keys and allow list.
	RoleAdmin = "admin"
	// RoleUser may use its service's interfaces only.
	RoleUser = "user"
)

// ServiceStreaming is the service of the streaming interface (audio
// settings, sessions, AudioHook), the default service of an API key.
const ServiceStreaming = "streaming"

// DefaultTenant is the tenant the first start creates.
const DefaultTenant = "default"

// Tenant is one customer account; every other record belongs to one.
type Tenant struct {
	ID        string
	CreatedAt time.Time
}

// User is a person who signs in with a password.
type User struct {
	ID           string
	TenantID     string
	Name         string
	PasswordHash string // Argon2id, PHC string form
	CreatedAt    time.Time
}

// AdminToken is a bearer token of a user that does not expire (spec 5.3).
type AdminToken struct {
	ID        string
	UserID    string
	TenantID  string
	Lookup    string
	Digest    []byte
	CreatedAt time.Time
	Revoked   bool
}

// APIKey is a key of one tenant and one service.
type APIKey struct {
	ID       string
	TenantID string
	Service  string
	Role     string
	Name     string
	Lookup   string
	Digest   []byte
	// AudioHookSecret is the sealed AudioHook client secret, nil when the
	// key has none.
	AudioHookSecret []byte
	CreatedAt       time.Time
	Revoked         bool
}

// AllowEntry admits a network to a tenant's service.
type AllowEntry struct {
	ID        string
	TenantID  string
	Service   string
	Prefix    netip.Prefix
	CreatedAt time.Time
}

// OAuthClient is a client of the client-credentials grant.
type OAuthClient struct {
	ID        string // the client_id
	TenantID  string
	Digest    []byte
	CreatedAt time.Time
	Revoked   bool
}

// InitialRecords is everything the first start creates, written in one
// transaction.
type InitialRecords struct {
	Tenant      Tenant
	User        User
	AdminToken  AdminToken
	APIKey      APIKey
	OAuthClient OAuthClient
	AllowList   []AllowEntry
	// KeyCheck is a value sealed with the master key; a later start opens
	// it to prove it has the same master key.
	KeyCheck []byte
}

// Store is the persistence auth needs. Implementations must be safe for
// concurrent use.
type Store interface {
	// Initialise writes recs atomically. It returns ErrAlreadyInitialised,
	// writing nothing, when a key check already exists.
	Initialise(ctx context.Context, recs InitialRecords) error
	// KeyCheck returns the key check written by Initialise, or ErrNotFound.
	KeyCheck(ctx context.Context) ([]byte, error)
	// CreateTenant stores a new tenant.
	CreateTenant(ctx context.Context, t Tenant) error
	// CreateAPIKey stores a new API key of an existing tenant.
	CreateAPIKey(ctx context.Context, k APIKey) error
	// APIKeyByLookup returns the API key with that lookup, revoked or not,
	// or ErrNotFound.
	APIKeyByLookup(ctx context.Context, lookup string) (APIKey, error)
}

// RefreshToken is one link of a refresh-token chain. A chain (family)
// starts with a client-credentials grant; every refresh uses its token once
// and issues the next link. FamilyID is also the session_state of the
// token responses.
type RefreshToken struct {
	ID              string
	TenantID        string
	ClientID        string
	FamilyID        string
	Lookup          string
	Digest          []byte
	Scope           string
	CreatedAt       time.Time
	ExpiresAt       time.Time
	FamilyExpiresAt time.Time // no link of the family lives beyond it
	Used            bool
	Revoked         bool
}

// SealedSecret is a value sealed with the master key, stored by name.
type SealedSecret struct {
	Name      string
	Value     []byte
	CreatedAt time.Time
}

// The stores below are what the management and identity types of this
// package need; package store implements them all. Implementations must be
// safe for concurrent use and return ErrNotFound and ErrConflict where a
// method says so.

// AdminStore is the persistence of Admin.
type AdminStore interface {
	// AdminTokenByLookup returns the admin token with that lookup, revoked
	// or not, or ErrNotFound.
	AdminTokenByLookup(ctx context.Context, lookup string) (AdminToken, error)
	// User returns the user with that id, or ErrNotFound.
	User(ctx context.Context, id string) (User, error)
	// SetPasswordHash replaces a user's password hash; ErrNotFound if the
	// user does not exist.
	SetPasswordHash(ctx context.Context, userID, hash string) error
	// ReplaceAdminToken revokes every active token of t.UserID at time at
	// and stores t, atomically.
	ReplaceAdminToken(ctx context.Context, t AdminToken, at time.Time) error
	// Tenant returns the tenant with that id, or ErrNotFound.
	Tenant(ctx context.Context, id string) (Tenant, error)
	// Tenants returns every tenant, ordered by id.
	Tenants(ctx context.Context) ([]Tenant, error)
	// AddTenant stores a new tenant; ErrConflict if the id exists.
	AddTenant(ctx context.Context, t Tenant) error
}

// KeyAdminStore is the persistence of KeyAdmin.
type KeyAdminStore interface {
	// APIKeys returns the active (not revoked) keys of a tenant, oldest
	// first.
	APIKeys(ctx context.Context, tenantID string) ([]APIKey, error)
	// APIKeyByID returns the key with that id, revoked or not, or
	// ErrNotFound.
	APIKeyByID(ctx context.Context, id string) (APIKey, error)
	// RevokeAPIKey marks an active key revoked at time at; ErrNotFound if
	// there is no such active key.
	RevokeAPIKey(ctx context.Context, id string, at time.Time) error
}

// AllowListStore is the persistence of AllowList.
type AllowListStore interface {
	// AllowList returns every entry of a tenant, of every service, oldest
	// first.
	AllowList(ctx context.Context, tenantID string) ([]AllowEntry, error)
	// CreateAllowEntry stores a new entry; ErrConflict if the tenant's
	// service already has that prefix.
	CreateAllowEntry(ctx context.Context, e AllowEntry) error
	// DeleteAllowEntry deletes the entry with that id, if guard, given the
	// entry and every other entry of its tenant, returns nil; else it
	// deletes nothing and returns guard's error. Guard and delete are one
	// transaction, serialised with other deletes of the tenant, so that two
	// concurrent deletes cannot together do what guard forbids. ErrNotFound
	// if there is no such entry.
	DeleteAllowEntry(ctx context.Context, id string, guard func(entry AllowEntry, others []AllowEntry) error) (AllowEntry, error)
}

// OAuthStore is the persistence of Issuer.
type OAuthStore interface {
	// Tenant returns the tenant with that id, or ErrNotFound.
	Tenant(ctx context.Context, id string) (Tenant, error)
	// OAuthClient returns the client with that id, revoked or not, or
	// ErrNotFound.
	OAuthClient(ctx context.Context, id string) (OAuthClient, error)
	// OAuthClients returns the active clients of a tenant, oldest first.
	OAuthClients(ctx context.Context, tenantID string) ([]OAuthClient, error)
	// CreateOAuthClient stores a new client of an existing tenant.
	CreateOAuthClient(ctx context.Context, c OAuthClient) error
	// RevokeOAuthClient marks an active client and all its refresh tokens
	// revoked at time at, atomically; ErrNotFound if there is no such
	// active client.
	RevokeOAuthClient(ctx context.Context, id string, at time.Time) error
	// CreateRefreshToken stores the first link of a refresh-token family.
	CreateRefreshToken(ctx context.Context, t RefreshToken) error
	// RefreshTokenByLookup returns the refresh token with that lookup,
	// used, revoked or expired, or ErrNotFound.
	RefreshTokenByLookup(ctx context.Context, lookup string) (RefreshToken, error)
	// RotateRefreshToken marks the token usedID used at time at and stores
	// next, atomically, if usedID is neither used nor revoked; else it
	// stores nothing and returns ErrConflict.
	RotateRefreshToken(ctx context.Context, usedID string, at time.Time, next RefreshToken) error
	// RevokeRefreshFamily marks every token of a family revoked at time at.
	RevokeRefreshFamily(ctx context.Context, familyID string, at time.Time) error
	// RefreshFamilyRevoked reports whether a token of the family was
	// revoked (false for an unknown family).
	RefreshFamilyRevoked(ctx context.Context, familyID string) (bool, error)
	// DeleteExpiredRefreshTokens deletes tokens that expired before time
	// before and returns how many.
	DeleteExpiredRefreshTokens(ctx context.Context, before time.Time) (int64, error)
}

// SigningKeyStore is the persistence of SigningKeys.
type SigningKeyStore interface {
	// SealedSecrets returns the sealed secrets whose names start with
	// prefix, ordered by name.
	SealedSecrets(ctx context.Context, prefix string) ([]SealedSecret, error)
	// CreateSealedSecret stores a new sealed secret; ErrConflict if the
	// name exists.
	CreateSealedSecret(ctx context.Context, v SealedSecret) error
	// DeleteSealedSecret deletes a sealed secret; deleting one that does
	// not exist is not an error.
	DeleteSealedSecret(ctx context.Context, name string) error
}
