package auth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// memStore is an in-memory Store.
type memStore struct {
	mu       sync.Mutex
	keyCheck []byte
	tenants  map[string]Tenant
	keys     map[string]APIKey // by lookup
	fail     error             // returned by every method when set
}

func newMemStore() *memStore {
	return &memStore{tenants: map[string]Tenant{}, keys: map[string]APIKey{}}
}

func (m *memStore) Initialise(_ context.Context, r InitialRecords) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	if m.keyCheck != nil {
		return ErrAlreadyInitialised
	}
	m.keyCheck = r.KeyCheck
	m.tenants[r.Tenant.ID] = r.Tenant
	m.keys[r.APIKey.Lookup] = r.APIKey
	return nil
}

func (m *memStore) KeyCheck(context.Context) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	if m.keyCheck == nil {
		return nil, ErrNotFound
	}
	return m.keyCheck, nil
}

func (m *memStore) CreateTenant(_ context.Context, t Tenant) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tenants[t.ID] = t
	return m.fail
}

func (m *memStore) CreateAPIKey(_ context.Context, k APIKey) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.keys[k.Lookup] = k
	return nil
}

func (m *memStore) APIKeyByLookup(_ context.Context, lookup string) (APIKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return APIKey{}, m.fail
	}
	k, ok := m.keys[lookup]
	if !ok {
		return APIKey{}, ErrNotFound
	}
	return k, nil
}

func testKey(b byte) MasterKey {
	var mk MasterKey
	for i := range mk.key {
		mk.key[i] = b + byte(i)
	}
	return mk
}

func TestParseMasterKey(t *testing.T) {
	raw := bytes.Repeat([]byte{0xab}, MasterKeySize)
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"base64", base64.StdEncoding.EncodeToString(raw), true},
		{"base64 with newline", base64.StdEncoding.EncodeToString(raw) + "\n", true},
		{"raw base64", base64.RawStdEncoding.EncodeToString(raw), true},
		{"url base64", base64.URLEncoding.EncodeToString(raw), true},
		{"hex", hex.EncodeToString(raw), true},
		{"short", base64.StdEncoding.EncodeToString(raw[:16]), false},
		{"long hex", hex.EncodeToString(append(raw, 1)), false},
		{"empty", "", false},
		{"garbage", "not a key at all!", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mk, err := ParseMasterKey(tt.in)
			if tt.ok {
				if err != nil || !bytes.Equal(mk.key[:], raw) {
					t.Fatalf("ParseMasterKey = %x, %v", mk.key, err)
				}
			} else if !errors.Is(err, ErrBadMasterKey) {
				t.Fatalf("err = %v, want ErrBadMasterKey", err)
			}
		})
	}
}

func TestLoadOrCreateMasterKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "master.key")
	mk1, created, err := LoadOrCreateMasterKey("", path)
	if err != nil || !created {
		t.Fatalf("first load: created=%v err=%v", created, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode = %v, %v; want 0600", st.Mode().Perm(), err)
	}
	mk2, created, err := LoadOrCreateMasterKey("", path)
	if err != nil || created || mk1 != mk2 {
		t.Fatalf("second load: same=%v created=%v err=%v", mk1 == mk2, created, err)
	}
	env := hex.EncodeToString(bytes.Repeat([]byte{7}, MasterKeySize))
	mk3, created, err := LoadOrCreateMasterKey(env, path)
	if err != nil || created || mk3 == mk1 || mk3.key[0] != 7 {
		t.Fatalf("env key: %v created=%v", err, created)
	}
	if _, _, err := LoadOrCreateMasterKey("short", path); !errors.Is(err, ErrBadMasterKey) {
		t.Errorf("bad env key = %v", err)
	}
	if err := os.WriteFile(path, []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateMasterKey("", path); !errors.Is(err, ErrBadMasterKey) {
		t.Errorf("bad key file = %v", err)
	}
}

func TestDerive(t *testing.T) {
	mk := testKey(1)
	a, b := mk.Derive("a"), mk.Derive("b")
	if bytes.Equal(a, b) || len(a) != 32 || !bytes.Equal(a, mk.Derive("a")) || bytes.Equal(a, testKey(2).Derive("a")) {
		t.Fatal("Derive must be deterministic, 32 bytes, and differ by purpose and key")
	}
}

func TestTokens(t *testing.T) {
	tok, lookup := newToken(prefixAPIKey)
	tests := []struct {
		name, in string
		want     string
		ok       bool
	}{
		{"fresh", tok, lookup, true},
		{"wrong prefix", strings.Replace(tok, "esk_", "est_", 1), "", false},
		{"no prefix", tok[4:], "", false},
		{"short secret", tok[:len(tok)-1], "", false},
		{"long secret", tok + "A", "", false},
		{"bad lookup", "esk_zzzzzzzzzzzzzzzz_" + tok[len(tok)-43:], "", false},
		{"missing separator", "esk_" + lookup + tok[len(tok)-43:], "", false},
		{"empty", "", "", false},
		{"huge", "esk_" + strings.Repeat("a", 500), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseToken(prefixAPIKey, tt.in)
			if ok != tt.ok || got != tt.want {
				t.Fatalf("parseToken(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func FuzzParseToken(f *testing.F) {
	tok, _ := newToken(prefixAPIKey)
	for _, s := range []string{tok, "", "esk_", "esk__", "esk_0123456789abcdef_", tok + tok} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lookup, ok := parseToken(prefixAPIKey, s)
		if ok && (len(lookup) != 2*lookupBytes || !strings.HasPrefix(s, prefixAPIKey+"_"+lookup+"_")) {
			t.Fatalf("parseToken(%q) accepted lookup %q", s, lookup)
		}
	})
}

func TestHasher(t *testing.T) {
	h := NewHasher(testKey(1))
	d := h.Digest("secret")
	if !h.Equal(d, "secret") || h.Equal(d, "secret2") || h.Equal(nil, "secret") {
		t.Fatal("Equal must accept only the digest's secret")
	}
	if bytes.Equal(d, NewHasher(testKey(2)).Digest("secret")) {
		t.Fatal("digests must depend on the master key")
	}
}

func TestSealer(t *testing.T) {
	s := NewSealer(testKey(1))
	sealed := s.Seal([]byte("hello"), "ad")
	if pt, err := s.Open(sealed, "ad"); err != nil || string(pt) != "hello" {
		t.Fatalf("Open = %q, %v", pt, err)
	}
	for i := range sealed {
		tampered := bytes.Clone(sealed)
		tampered[i] ^= 1
		if _, err := s.Open(tampered, "ad"); err == nil {
			t.Fatalf("tampered byte %d opened", i)
		}
	}
	tests := []struct {
		name   string
		sealer *Sealer
		in     []byte
		ad     string
	}{
		{"other associated data", s, sealed, "other"},
		{"other master key", NewSealer(testKey(2)), sealed, "ad"},
		{"truncated", s, sealed[:10], "ad"},
		{"empty", s, nil, "ad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.sealer.Open(tt.in, tt.ad); !errors.Is(err, errSealed) {
				t.Fatalf("Open = %v, want errSealed", err)
			}
		})
	}
}

func TestPassword(t *testing.T) {
	h := HashPassword("correct horse")
	if !strings.HasPrefix(h, "$argon2id$v=19$m=65536,t=3,p=2$") {
		t.Fatalf("hash %q is not a PHC argon2id string", h)
	}
	if h == HashPassword("correct horse") {
		t.Fatal("hashes of one password must differ by salt")
	}
	tests := []struct {
		name, hash, password string
		want                 bool
	}{
		{"right", h, "correct horse", true},
		{"wrong", h, "correct horse!", false},
		{"empty password", h, "", false},
		{"not argon2id", strings.Replace(h, "argon2id", "argon2i", 1), "correct horse", false},
		{"bad version", strings.Replace(h, "v=19", "v=16", 1), "correct horse", false},
		{"bad params", strings.Replace(h, "m=65536", "m=x", 1), "correct horse", false},
		{"bad salt", strings.Replace(h, "$argon2id$v=19$m=65536,t=3,p=2$", "$argon2id$v=19$m=65536,t=3,p=2$!", 1), "correct horse", false},
		{"empty", "", "x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckPassword(tt.hash, tt.password); got != tt.want {
				t.Fatalf("CheckPassword = %v, want %v", got, tt.want)
			}
		})
	}
}

// secretFields are the fields of the bootstrap entry.
var secretFields = []string{"tenant_id", "admin_user", "admin_password", "admin_token", "oauth_client_id",
	"oauth_client_secret", "api_key", "audiohook_client_secret"}

func TestBootstrap(t *testing.T) {
	store, mk := newMemStore(), testKey(1)
	core, logs := observer.New(zapcore.DebugLevel)
	creds, err := Bootstrap(t.Context(), store, mk, zap.New(core))
	if err != nil || creds == nil {
		t.Fatalf("first Bootstrap = %v, %v", creds, err)
	}
	entries := logs.FilterMessage("bootstrap credentials").All()
	if len(entries) != 1 {
		t.Fatalf("%d bootstrap entries, want 1", len(entries))
	}
	fields := entries[0].ContextMap()
	for _, f := range secretFields {
		if v, _ := fields[f].(string); v == "" {
			t.Errorf("bootstrap entry lacks %s", f)
		}
	}
	if len(fields) != len(secretFields) {
		t.Errorf("bootstrap entry has fields %v, want exactly %v", fields, secretFields)
	}
	if creds.TenantID != DefaultTenant || creds.AdminUser != "admin" {
		t.Errorf("tenant %q user %q", creds.TenantID, creds.AdminUser)
	}
	if raw, err := base64.StdEncoding.DecodeString(creds.AudioHookClientSecret); err != nil || len(raw) != secretBytes {
		t.Errorf("AudioHook secret %q must be base64 of %d bytes", creds.AudioHookClientSecret, secretBytes)
	}
	p, err := NewKeys(store, mk).Authenticate(t.Context(), creds.APIKey)
	if err != nil || p.Role != RoleAdmin || p.Service != ServiceStreaming || p.TenantID != DefaultTenant {
		t.Fatalf("bootstrap key authenticates as %+v, %v", p, err)
	}
	// The sealed AudioHook secret opens with the key's id as associated data.
	rec := store.keys[strings.Split(creds.APIKey, "_")[1]]
	if pt, err := NewSealer(mk).Open(rec.AudioHookSecret, AudioHookSecretAD(rec.ID)); err != nil || string(pt) != creds.AudioHookClientSecret {
		t.Errorf("sealed AudioHook secret opens to %q, %v", pt, err)
	}

	core2, logs2 := observer.New(zapcore.DebugLevel)
	again, err := Bootstrap(t.Context(), store, mk, zap.New(core2))
	if err != nil || again != nil {
		t.Fatalf("second Bootstrap = %v, %v; want nil, nil", again, err)
	}
	secrets := []string{creds.AdminPassword, creds.AdminToken, creds.OAuthClientSecret, creds.APIKey, creds.AudioHookClientSecret}
	for _, e := range logs2.All() {
		line := e.Message + " " + strings.Join(mapValues(e.ContextMap()), " ")
		for _, s := range secrets {
			if strings.Contains(line, s) {
				t.Errorf("second start logged a secret: %q", line)
			}
		}
	}
	if logs2.FilterMessage("bootstrap credentials").Len() != 0 {
		t.Error("second start logged the bootstrap entry")
	}

	if _, err := Bootstrap(t.Context(), store, testKey(9), zap.NewNop()); !errors.Is(err, ErrMasterKeyMismatch) {
		t.Errorf("Bootstrap with another master key = %v, want ErrMasterKeyMismatch", err)
	}
	broken := newMemStore()
	broken.fail = errors.New("disk on fire")
	if _, err := Bootstrap(t.Context(), broken, mk, zap.NewNop()); err == nil {
		t.Error("Bootstrap over a failing store succeeded")
	}
}

func mapValues(m map[string]any) []string {
	var out []string
	for _, v := range m {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func TestAuthenticate(t *testing.T) {
	store, mk := newMemStore(), testKey(1)
	keys := NewKeys(store, mk)
	ctx := t.Context()
	valid, err := keys.Create(ctx, NewKey{TenantID: "t1", Name: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	revoked, err := keys.Create(ctx, NewKey{TenantID: "t1", Service: "other", Role: RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	r := store.keys[revoked.Record.Lookup]
	r.Revoked = true
	store.keys[revoked.Record.Lookup] = r
	unknown, _ := newToken(prefixAPIKey)
	wrongSecret := valid.Key[:len(valid.Key)-4] + "AAAA"
	if wrongSecret == valid.Key {
		wrongSecret = valid.Key[:len(valid.Key)-4] + "BBBB"
	}

	tests := []struct {
		name, key string
		wantErr   error
	}{
		{"valid", valid.Key, nil},
		{"empty", "", ErrInvalidCredentials},
		{"malformed", "hello", ErrInvalidCredentials},
		{"unknown lookup", unknown, ErrInvalidCredentials},
		{"wrong secret", wrongSecret, ErrInvalidCredentials},
		{"revoked", revoked.Key, ErrInvalidCredentials},
		{"admin token is not an API key", strings.Replace(valid.Key, "esk_", "est_", 1), ErrInvalidCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := keys.Authenticate(ctx, tt.key)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && (p.TenantID != "t1" || p.Role != RoleUser || p.Service != ServiceStreaming || p.KeyID != valid.Record.ID) {
				t.Fatalf("principal = %+v", p)
			}
		})
	}
	store.fail = errors.New("db down")
	if _, err := keys.Authenticate(ctx, valid.Key); err == nil || errors.Is(err, ErrInvalidCredentials) {
		t.Errorf("store failure = %v; want a wrapped store error, not invalid credentials", err)
	}
}

func TestCreateKeyWithAudioHookSecret(t *testing.T) {
	store, mk := newMemStore(), testKey(1)
	issued, err := NewKeys(store, mk).Create(t.Context(), NewKey{TenantID: "t1", AudioHookSecret: true})
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := base64.StdEncoding.DecodeString(issued.AudioHookSecret); err != nil || len(raw) != 32 {
		t.Fatalf("AudioHook secret %q", issued.AudioHookSecret)
	}
	if bytes.Contains(issued.Record.AudioHookSecret, []byte(issued.AudioHookSecret)) {
		t.Fatal("AudioHook secret stored in the clear")
	}
	if bytes.Contains(issued.Record.Digest, []byte(issued.Key)) {
		t.Fatal("API key stored in the clear")
	}
}

func TestAuthenticateAudioHook(t *testing.T) {
	store, mk := newMemStore(), testKey(1)
	keys := NewKeys(store, mk)
	ctx := t.Context()
	with, err := keys.Create(ctx, NewKey{TenantID: "t1", AudioHookSecret: true})
	if err != nil {
		t.Fatal(err)
	}
	without, err := keys.Create(ctx, NewKey{TenantID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	p, secret, err := keys.AuthenticateAudioHook(ctx, with.Key)
	want, _ := base64.StdEncoding.DecodeString(with.AudioHookSecret)
	if err != nil || p.KeyID != with.Record.ID || !bytes.Equal(secret, want) || len(secret) != 32 {
		t.Fatalf("key with secret: %+v %x %v", p, secret, err)
	}
	if p, secret, err := keys.AuthenticateAudioHook(ctx, without.Key); err != nil || secret != nil || p.KeyID != without.Record.ID {
		t.Fatalf("key without secret: %+v %x %v", p, secret, err)
	}
	if _, _, err := keys.AuthenticateAudioHook(ctx, "esk_nope"); !errors.Is(err, ErrInvalidCredentials) {
		t.Fatalf("bad key: %v", err)
	}
	// A sealed secret moved onto another key does not open.
	r := store.keys[without.Record.Lookup]
	r.AudioHookSecret = with.Record.AudioHookSecret
	store.keys[without.Record.Lookup] = r
	if _, _, err := keys.AuthenticateAudioHook(ctx, without.Key); err == nil || errors.Is(err, ErrInvalidCredentials) {
		t.Fatalf("transplanted secret: %v", err)
	}
}
