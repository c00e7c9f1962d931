package auth

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
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
// exist only in memory, in the one bootstrap log entry and, when
// BootstrapOptions.CredentialsFile names one, in that file.
type Credentials struct {
	TenantID              string `json:"tenant_id"`
	AdminUser             string `json:"admin_user"`
	AdminPassword         string `json:"admin_password"`
	AdminToken            string `json:"admin_token"`
	OAuthClientID         string `json:"oauth_client_id"`
	OAuthClientSecret     string `json:"oauth_client_secret"`
	APIKey                string `json:"api_key"`
	AudioHookClientSecret string `json:"audiohook_client_secret"`
}

// BootstrapOptions adjust a first start. The zero value creates the
// default records and writes no file.
type BootstrapOptions struct {
	// AllowList are management allow-list entries of the streaming
	// service created beside loopback (for instance the pod network of a
	// container platform, so that an operator can reach the management
	// interface of a fresh container). Default: loopback only. Later
	// starts ignore it: the allow list is then managed through the
	// management interface.
	AllowList []netip.Prefix
	// CredentialsFile, when set, is where the replica that initialises
	// the store also writes the credentials (JSON, mode 0600, created and
	// never overwritten; see WriteCredentialsFile). Default: no file.
	CredentialsFile string
}

// Bootstrap initialises an empty store: tenant "default",
// user "admin" with a random password and a non-expiring token, an OAuth
// client, a streaming API key of role admin with an AudioHook client
// secret, and allow-list entries for loopback. It logs the secrets once, in
// one entry with message "bootstrap credentials", and returns them.
// Bootstrap is BootstrapWith with the zero options.
//
// Against a store that is already initialised it checks that mk opens the
// store's key check (else ErrMasterKeyMismatch), logs that the store is
// initialised, and returns nil credentials. It never logs a secret then.
// Concurrent first starts against one store are safe: one wins, the others
// behave as later starts.
func Bootstrap(ctx context.Context, store Store, mk MasterKey, log *zap.Logger) (*Credentials, error) {
	return BootstrapWith(ctx, store, mk, log, BootstrapOptions{})
}

// BootstrapWith is Bootstrap with options: the first start also allow-lists
// opts.AllowList for management and writes the credentials to
// opts.CredentialsFile. Only the start that initialises the store writes
// the file; failing to write it is logged at error level and is not fatal
// (the log entry still holds the credentials). The log entry is at warn
// level: a caller that wants it whatever the configured level passes a
// logger that enables warn.
func BootstrapWith(ctx context.Context, store Store, mk MasterKey, log *zap.Logger, opts BootstrapOptions) (*Credentials, error) {
	sealer := NewSealer(mk)
	if err := checkKey(ctx, store, sealer); !errors.Is(err, ErrNotFound) {
		if err == nil {
			var fields []zap.Field
			if opts.CredentialsFile != "" {
				if _, serr := os.Stat(opts.CredentialsFile); serr == nil {
					fields = append(fields, zap.String("credentials_file", opts.CredentialsFile))
				}
			}
			log.Info("store already initialised; no credentials are printed", fields...)
		}
		return nil, err
	}
	recs, creds := newInitialRecords(mk, sealer, time.Now(), opts.AllowList)
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
	fileField := zap.Skip()
	if opts.CredentialsFile != "" {
		if err := WriteCredentialsFile(opts.CredentialsFile, creds); err != nil {
			log.Error("the bootstrap credentials file was not written; copy them from the bootstrap credentials entry",
				zap.String("credentials_file", opts.CredentialsFile), zap.Error(err))
		} else {
			fileField = zap.String("credentials_file", opts.CredentialsFile)
		}
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
		fileField,
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

// newInitialRecords makes the first start's records; allow are management
// allow-list entries of the streaming service beside loopback.
func newInitialRecords(mk MasterKey, sealer *Sealer, now time.Time, allow []netip.Prefix) (InitialRecords, *Credentials) {
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

	prefixes := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	for _, p := range allow {
		if p = p.Masked(); p.IsValid() && !slices.Contains(prefixes, p) {
			prefixes = append(prefixes, p)
		}
	}
	var entries []AllowEntry
	for _, p := range prefixes {
		entries = append(entries, AllowEntry{ID: uuid.NewString(), TenantID: tenant.ID, Service: ServiceStreaming,
			Prefix: p, CreatedAt: now})
	}
	recs := InitialRecords{
		Tenant: tenant, User: user, AdminToken: token, APIKey: key.Record, OAuthClient: client, AllowList: entries,
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
