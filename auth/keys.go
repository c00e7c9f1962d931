package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Principal is the caller an API key authenticates.
type Principal struct {
	TenantID string
	KeyID    string
	Service  string
	Role     string
}

// Keys issues and authenticates API keys. It is safe for concurrent use.
type Keys struct {
	store  Store
	hasher *Hasher
	sealer *Sealer
}

// NewKeys returns Keys over store, hashing and sealing with keys derived
// from mk.
func NewKeys(store Store, mk MasterKey) *Keys {
	return &Keys{store: store, hasher: NewHasher(mk), sealer: NewSealer(mk)}
}

// NewKey describes an API key to issue.
type NewKey struct {
	TenantID string
	Service  string // default ServiceStreaming
	Role     string // default RoleUser
	Name     string
	// AudioHookSecret asks for an AudioHook client secret with the key.
	AudioHookSecret bool
}

// IssuedKey is a new API key with its secrets in the clear, to be shown
// once.
type IssuedKey struct {
	Record          APIKey
	Key             string
	AudioHookSecret string // empty unless asked for
}

// Create issues a new API key.
func (k *Keys) Create(ctx context.Context, req NewKey) (IssuedKey, error) {
	out := newAPIKey(k.hasher, k.sealer, req, time.Now())
	if err := k.store.CreateAPIKey(ctx, out.Record); err != nil {
		return IssuedKey{}, fmt.Errorf("auth: storing API key: %w", err)
	}
	return out, nil
}

// newAPIKey makes a key and its record, not yet stored: the secret's
// digest, and the AudioHook client secret sealed to the key's id when
// asked for. Service defaults to streaming, role to user.
func newAPIKey(hasher *Hasher, sealer *Sealer, req NewKey, now time.Time) IssuedKey {
	if req.Service == "" {
		req.Service = ServiceStreaming
	}
	if req.Role == "" {
		req.Role = RoleUser
	}
	key, lookup := newToken(prefixAPIKey)
	rec := APIKey{ID: uuid.NewString(), TenantID: req.TenantID, Service: req.Service, Role: req.Role, Name: req.Name,
		Lookup: lookup, Digest: hasher.Digest(key), CreatedAt: now.UTC().Truncate(time.Millisecond)}
	out := IssuedKey{Key: key}
	if req.AudioHookSecret {
		out.AudioHookSecret = newAudioHookSecret()
		rec.AudioHookSecret = sealer.Seal([]byte(out.AudioHookSecret), AudioHookSecretAD(rec.ID))
	}
	out.Record = rec
	return out
}

// Authenticate returns the principal of an API key. Every failure (absent,
// malformed, unknown, wrong, revoked) is ErrInvalidCredentials; a store
// failure is returned wrapped.
func (k *Keys) Authenticate(ctx context.Context, apiKey string) (Principal, error) {
	rec, err := k.verify(ctx, apiKey)
	if err != nil {
		return Principal{}, err
	}
	return rec.principal(), nil
}

// verify returns the active key record whose secret apiKey is.
func (k *Keys) verify(ctx context.Context, apiKey string) (APIKey, error) {
	lookup, ok := parseToken(prefixAPIKey, apiKey)
	if !ok {
		return APIKey{}, ErrInvalidCredentials
	}
	rec, err := k.store.APIKeyByLookup(ctx, lookup)
	switch {
	case errors.Is(err, ErrNotFound):
		// Spend the same digest work as a found key, so that timing does
		// not tell which lookups exist.
		k.hasher.Equal(nil, apiKey)
		return APIKey{}, ErrInvalidCredentials
	case err != nil:
		return APIKey{}, fmt.Errorf("auth: looking up API key: %w", err)
	}
	if !k.hasher.Equal(rec.Digest, apiKey) || rec.Revoked {
		return APIKey{}, ErrInvalidCredentials
	}
	return rec, nil
}

func (k APIKey) principal() Principal {
	return Principal{TenantID: k.TenantID, KeyID: k.ID, Service: k.Service, Role: k.Role}
}

// AuthenticateAudioHook authenticates the X-API-KEY of an AudioHook upgrade
// and returns, with the principal, the key's AudioHook client secret as the
// HMAC key Genesys Cloud signs with: the base64-decoded secret, or nil when
// the key has none (then the upgrade needs no signature). Errors are those
// of Authenticate; a secret that does not open is a store fault, returned
// wrapped.
func (k *Keys) AuthenticateAudioHook(ctx context.Context, apiKey string) (Principal, []byte, error) {
	rec, err := k.verify(ctx, apiKey)
	if err != nil {
		return Principal{}, nil, err
	}
	p := rec.principal()
	if rec.AudioHookSecret == nil {
		return p, nil, nil
	}
	pt, err := k.sealer.Open(rec.AudioHookSecret, AudioHookSecretAD(rec.ID))
	if err != nil {
		return Principal{}, nil, fmt.Errorf("auth: AudioHook secret of key %s: %w", rec.ID, err)
	}
	secret, err := base64.StdEncoding.DecodeString(string(pt))
	if err != nil {
		return Principal{}, nil, fmt.Errorf("auth: AudioHook secret of key %s is not base64: %w", rec.ID, err)
	}
	return p, secret, nil
}
