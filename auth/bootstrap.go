package auth

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"
)

// keyCheckPlaintext is sealed at first start; opening it later proves the
// master key is the one the store was initialised with.
const keyCheckPlaintext = "earshot master key check v1"

// keyCheckAD is the associated data of the key check.
const keyCheckAD = "key-check"

// AudioHookSecretAD is the associated data an API key's AudioHook secret is
// sealed with.
func AudioHookSecretAD(keyID string) string { return "audiohook-secret:" + keyID }

// Credentials are the secrets the first start creates, in the clear. They
// exist only in memory and in the one bootstrap log entry.
type Credentials struct {
	TenantID              string
	AdminUser             string
	AdminPassword         string
	AdminToken            string
	OAuthClientID         string
	OAuthClientSecret     string
	APIKey                string
	AudioHookClientSecret string
}

// Bootstrap initialises an empty store (DESIGN.md 2.4): tenant "default",
// user "admin" with a random password and a non-expiring token, an OAuth
// client, a streaming API key of role admin with an AudioHook client
// secret, and allow-list entries for loopback. It logs the secrets once, in
// one entry with message "bootstrap credentials", and returns them.
//
// Against a store that is already initialised it checks that mk opens the
// store's key check (else ErrMasterKeyMismatch), logs that the store is
// initialised, and returns nil credentials. It never logs a secret then.
// Concurrent first starts against one store are safe: one wins, the others
// behave as later starts.
func Bootstrap(ctx context.Context, store Store, mk MasterKey, log *zap.Logger) (*Credentials, error) {
	sealer := NewSealer(mk)
	if err := checkKey(ctx, store, sealer); !errors.Is(err, ErrNotFound) {
		if err == nil {
			log.Info("store already initialised; no credentials are printed")
		}
		return nil, err
	}
	recs, creds := newInitialRecords(mk, sealer, time.Now())
	err := store.Initialise(ctx, recs)
	if errors.Is(err, ErrAlreadyInitialised) {
		if err := checkKey(ctx, store, sealer); err != nil {
			return nil, err
		}
		log.Info("store initialised by another replica; no credentials are printed")
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("auth: initialising store: %w", err)
	}
	// Warn rather than Info: the entry must survive a raised log level, and
	// the operator must save these now; they are never shown again.
	log.Warn("bootstrap credentials",
		zap.String("tenant_id", creds.TenantID),
		zap.String("admin_user", creds.AdminUser),
		zap.String("admin_password", creds.AdminPassword),
		zap.String("admin_token", creds.AdminToken),
		zap.String("oauth_client_id", creds.OAuthClientID),
		zap.String("oauth_client_secret", creds.OAuthClientSecret),
		zap.String("api_key", creds.APIKey),
		zap.String("audiohook_client_secret", creds.AudioHookClientSecret),
	)
	return creds, nil
}

func checkKey(ctx context.Context, store Store, sealer *Sealer) error {
	sealed, err := store.KeyCheck(ctx)
	if err != nil {
		return err
	}
	pt, err := sealer.Open(sealed, keyCheckAD)
	if err != nil || string(pt) != keyCheckPlaintext {
		return ErrMasterKeyMismatch
	}
	return nil
}

func newInitialRecords(mk MasterKey, sealer *Sealer, now time.Time) (InitialRecords, *Credentials) {
	hasher := NewHasher(mk)
	now = now.UTC().Truncate(time.Millisecond)
	tenant := Tenant{ID: DefaultTenant, CreatedAt: now}

	password := base64.RawURLEncoding.EncodeToString(randomBytes(18))
	user := User{ID: uuid.NewString(), TenantID: tenant.ID, Name: "admin", PasswordHash: HashPassword(password), CreatedAt: now}

	adminToken, tokenLookup := newToken(prefixAdminToken)
	token := AdminToken{ID: uuid.NewString(), UserID: user.ID, TenantID: tenant.ID, Lookup: tokenLookup,
		Digest: hasher.Digest(adminToken), CreatedAt: now}

	key := newAPIKey(hasher, sealer, NewKey{TenantID: tenant.ID, Service: ServiceStreaming, Role: RoleAdmin,
		Name: "bootstrap", AudioHookSecret: true}, now)

	clientSecret, _ := newToken(prefixOAuth)
	client := OAuthClient{ID: "earshot-" + hex.EncodeToString(randomBytes(6)), TenantID: tenant.ID, Digest: hasher.Digest(clientSecret), CreatedAt: now}

	var allow []AllowEntry
	for _, p := range []string{"127.0.0.0/8", "::1/128"} {
		allow = append(allow, AllowEntry{ID: uuid.NewString(), TenantID: tenant.ID, Service: ServiceStreaming,
			Prefix: netip.MustParsePrefix(p), CreatedAt: now})
	}
	recs := InitialRecords{
		Tenant: tenant, User: user, AdminToken: token, APIKey: key.Record, OAuthClient: client, AllowList: allow,
		KeyCheck: sealer.Seal([]byte(keyCheckPlaintext), keyCheckAD),
	}
	creds := &Credentials{
		TenantID: tenant.ID, AdminUser: user.Name, AdminPassword: password, AdminToken: adminToken,
		OAuthClientID: client.ID, OAuthClientSecret: clientSecret, APIKey: key.Key, AudioHookClientSecret: key.AudioHookSecret,
	}
	return recs, creds
}

// newAudioHookSecret returns a new AudioHook client secret. Genesys Cloud
// takes the client secret as base64 and signs with the decoded bytes, so the
// secret is the base64 of its random bytes.
func newAudioHookSecret() string {
	return base64.StdEncoding.EncodeToString(randomBytes(secretBytes))
}
