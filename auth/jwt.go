package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Signing keys are RSA keys sealed in the sealed_secrets table under
// names signingKeyPrefix + a zero-padded generation number. The highest
// generation signs; a replica that creates generation N+1 while another
// does the same loses on the table's primary key and adopts the winner's,
// so that creation and rotation are safe across replicas without a lock.
const (
	signingKeyPrefix = "jwt-signing-key/"
	signingKeyBits   = 2048
)

// Defaults of SigningKeysOptions.
const (
	DefaultKeyReload = time.Minute
	// minKeyReload bounds how often an unknown kid makes a replica re-read
	// the store, so that made-up kids cannot flood it.
	minKeyReload = 5 * time.Second
)

// SigningKeysOptions configure SigningKeys. The zero value works.
type SigningKeysOptions struct {
	// Lifetime is the age at which the signing key is replaced by a new
	// one, at the next token issued. Zero never rotates by age; Rotate
	// still does.
	Lifetime time.Duration
	// Reload is how long a replica trusts its copy of the key ring before
	// reading the store again (a key another replica created becomes
	// known at the latest then, or at once when a token names it).
	// Default one minute.
	Reload time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Logger receives warnings (a failed rotation or reload that the
	// keys survive). Default: no logs.
	Logger *zap.Logger
}

// SigningKeys holds the RS256 keys that sign access tokens, and publishes
// their public halves as a JWKS (RFC 7517). A retired key stays published
// until every token it signed has expired: access-token lifetime, plus
// the allowed clock skew, plus one Reload for replicas that have not yet
// seen its successor. It is safe for concurrent use.
type SigningKeys struct {
	store  SigningKeyStore
	sealer *Sealer
	opts   SigningKeysOptions

	ring atomic.Pointer[keyRing]
	mu   sync.Mutex             // serialises reloads and rotations
	seen map[string]*signingKey // parsed keys by name, under mu
}

type signingKey struct {
	name       string
	generation int64
	kid        string
	private    *rsa.PrivateKey
	createdAt  time.Time
}

// keyRing is an immutable snapshot of the keys, oldest generation first.
type keyRing struct {
	keys   []*signingKey
	loaded time.Time
}

// NewSigningKeys returns the signing keys kept in store, sealed with a
// key derived from mk. It reads nothing until first used; call Ensure at
// start-up to create the first key then.
func NewSigningKeys(store SigningKeyStore, mk MasterKey, opts SigningKeysOptions) *SigningKeys {
	if opts.Reload <= 0 {
		opts.Reload = DefaultKeyReload
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	return &SigningKeys{store: store, sealer: NewSealer(mk), opts: opts, seen: map[string]*signingKey{}}
}

// keep is how long a key stays published after its successor was created.
func (k *SigningKeys) keep() time.Duration { return AccessTokenTTL + ClockSkew + k.opts.Reload }

// Ensure creates the first signing key if the store has none.
func (k *SigningKeys) Ensure(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	ring, err := k.reload(ctx)
	if err != nil {
		return err
	}
	if len(ring.keys) > 0 {
		return nil
	}
	_, err = k.create(ctx, 1)
	return err
}

// Rotate creates a new signing key, which signs from now on, and forgets
// keys no longer published. It returns the new key's description.
func (k *SigningKeys) Rotate(ctx context.Context) (SigningKeyInfo, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	ring, err := k.reload(ctx)
	if err != nil {
		return SigningKeyInfo{}, err
	}
	next := int64(1)
	if n := len(ring.keys); n > 0 {
		next = ring.keys[n-1].generation + 1
	}
	ring, err = k.create(ctx, next)
	if err != nil {
		return SigningKeyInfo{}, err
	}
	k.prune(ctx, ring)
	active := ring.keys[len(ring.keys)-1]
	return SigningKeyInfo{KID: active.kid, CreatedAt: active.createdAt, Active: true}, nil
}

// create stores a new key of generation gen, or adopts the one another
// replica stored first, and returns the reloaded ring. Called with mu held.
func (k *SigningKeys) create(ctx context.Context, gen int64) (*keyRing, error) {
	priv, err := rsa.GenerateKey(rand.Reader, signingKeyBits)
	if err != nil {
		return nil, fmt.Errorf("auth: generating signing key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("auth: encoding signing key: %w", err)
	}
	name := fmt.Sprintf("%s%012d", signingKeyPrefix, gen)
	err = k.store.CreateSealedSecret(ctx, SealedSecret{Name: name, Value: k.sealer.Seal(der, name),
		CreatedAt: k.opts.Now().UTC().Truncate(time.Millisecond)})
	if err != nil && !errors.Is(err, ErrConflict) {
		return nil, fmt.Errorf("auth: storing signing key: %w", err)
	}
	return k.reload(ctx)
}

// prune deletes keys that are no longer published. Called with mu held;
// a failure only leaves an unpublished key in the store a while longer.
func (k *SigningKeys) prune(ctx context.Context, ring *keyRing) {
	pub := k.published(ring)
	for _, key := range ring.keys {
		if !pub[key] {
			if err := k.store.DeleteSealedSecret(ctx, key.name); err != nil {
				k.opts.Logger.Warn("could not delete a retired signing key", zap.String("kid", key.kid), zap.Error(err))
				continue
			}
			delete(k.seen, key.name)
		}
	}
}

// reload reads the key ring from the store. Called with mu held.
func (k *SigningKeys) reload(ctx context.Context) (*keyRing, error) {
	rows, err := k.store.SealedSecrets(ctx, signingKeyPrefix)
	if err != nil {
		return nil, fmt.Errorf("auth: reading signing keys: %w", err)
	}
	ring := &keyRing{loaded: k.opts.Now()}
	for _, row := range rows {
		key, ok := k.seen[row.Name]
		if !ok {
			if key, err = k.parse(row); err != nil {
				return nil, err
			}
			k.seen[row.Name] = key
		}
		ring.keys = append(ring.keys, key)
	}
	k.ring.Store(ring)
	return ring, nil
}

func (k *SigningKeys) parse(row SealedSecret) (*signingKey, error) {
	gen, err := strconv.ParseInt(strings.TrimPrefix(row.Name, signingKeyPrefix), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("auth: signing key %q: bad name", row.Name)
	}
	der, err := k.sealer.Open(row.Value, row.Name)
	if err != nil {
		return nil, fmt.Errorf("auth: signing key %q: %w", row.Name, err)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("auth: signing key %q: %w", row.Name, err)
	}
	priv, ok := parsed.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("auth: signing key %q is not an RSA key", row.Name)
	}
	return &signingKey{name: row.Name, generation: gen, kid: thumbprint(&priv.PublicKey), private: priv, createdAt: row.CreatedAt}, nil
}

// current returns the key ring, reading the store again when the copy is
// older than maxAge. A failed reload keeps an existing copy (logged): a
// database outage must not stop token verification.
func (k *SigningKeys) current(ctx context.Context, maxAge time.Duration) (*keyRing, error) {
	if ring := k.ring.Load(); ring != nil && k.opts.Now().Sub(ring.loaded) < maxAge {
		return ring, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	ring := k.ring.Load()
	if ring != nil && k.opts.Now().Sub(ring.loaded) < maxAge {
		return ring, nil // another goroutine reloaded meanwhile
	}
	fresh, err := k.reload(ctx)
	if err != nil {
		if ring != nil {
			k.opts.Logger.Warn("could not reload the signing keys; using the ones in memory", zap.Error(err))
			return ring, nil
		}
		return nil, err
	}
	return fresh, nil
}

// signer returns the key that signs now, creating the first one if none
// exists and rotating an expired one.
func (k *SigningKeys) signer(ctx context.Context) (*signingKey, error) {
	ring, err := k.current(ctx, k.opts.Reload)
	if err != nil {
		return nil, err
	}
	if len(ring.keys) == 0 {
		if err := k.Ensure(ctx); err != nil {
			return nil, err
		}
		if ring, err = k.current(ctx, k.opts.Reload); err != nil {
			return nil, err
		}
		if len(ring.keys) == 0 {
			return nil, errors.New("auth: no signing key after creating one")
		}
	}
	active := ring.keys[len(ring.keys)-1]
	if k.opts.Lifetime > 0 && k.opts.Now().Sub(active.createdAt) >= k.opts.Lifetime {
		if _, err := k.rotateIfStill(ctx, active); err != nil {
			k.opts.Logger.Warn("could not rotate the signing key; signing with the old one", zap.Error(err))
			return active, nil
		}
		ring, err = k.current(ctx, k.opts.Reload)
		if err != nil {
			return nil, err
		}
		active = ring.keys[len(ring.keys)-1]
	}
	return active, nil
}

// rotateIfStill rotates unless another goroutine or replica already
// replaced old.
func (k *SigningKeys) rotateIfStill(ctx context.Context, old *signingKey) (*keyRing, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	ring, err := k.reload(ctx)
	if err != nil {
		return nil, err
	}
	if n := len(ring.keys); n > 0 && ring.keys[n-1].generation != old.generation {
		return ring, nil
	}
	ring, err = k.create(ctx, old.generation+1)
	if err != nil {
		return nil, err
	}
	k.prune(ctx, ring)
	return ring, nil
}

// published returns the keys that are published now: the active one, and
// each older one until keep after its successor was created.
func (k *SigningKeys) published(ring *keyRing) map[*signingKey]bool {
	now := k.opts.Now()
	out := make(map[*signingKey]bool, len(ring.keys))
	for i, key := range ring.keys {
		if i == len(ring.keys)-1 || now.Sub(ring.keys[i+1].createdAt) < k.keep() {
			out[key] = true
		}
	}
	return out
}

// publicKey returns the published key with that kid. An unknown kid makes
// the ring reload (at most every minKeyReload): another replica may have
// rotated.
func (k *SigningKeys) publicKey(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	for _, maxAge := range []time.Duration{k.opts.Reload, minKeyReload} {
		ring, err := k.current(ctx, maxAge)
		if err != nil {
			return nil, err
		}
		for key := range k.published(ring) {
			if key.kid == kid {
				return &key.private.PublicKey, nil
			}
		}
	}
	return nil, errUnknownKID
}

// errUnknownKID means a token names a key that is not published.
var errUnknownKID = errors.New("auth: unknown signing key id")

// JWK is one public key of a JWKS (RFC 7517, RFC 7518 section 6.3).
type JWK struct {
	KTY string `json:"kty"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	KID string `json:"kid"`
	N   string `json:"n"`
	E   string `json:"e"`
}

// JWKS is a JSON Web Key Set.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// JWKS returns the published public keys, newest first.
func (k *SigningKeys) JWKS(ctx context.Context) (JWKS, error) {
	keys, err := k.publishedKeys(ctx)
	if err != nil {
		return JWKS{}, err
	}
	out := JWKS{Keys: make([]JWK, len(keys))}
	for i, key := range keys {
		n, e := jwkNumbers(&key.private.PublicKey)
		out.Keys[i] = JWK{KTY: "RSA", Use: "sig", Alg: "RS256", KID: key.kid, N: n, E: e}
	}
	return out, nil
}

// SigningKeyInfo describes a published signing key.
type SigningKeyInfo struct {
	KID       string
	CreatedAt time.Time
	Active    bool // the key that signs new tokens
}

// Info describes the published keys, newest (the active one) first.
func (k *SigningKeys) Info(ctx context.Context) ([]SigningKeyInfo, error) {
	keys, err := k.publishedKeys(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]SigningKeyInfo, len(keys))
	for i, key := range keys {
		out[i] = SigningKeyInfo{KID: key.kid, CreatedAt: key.createdAt, Active: i == 0}
	}
	return out, nil
}

// publishedKeys returns the published keys, newest first, creating the
// first key (or rotating an expired one) if needed.
func (k *SigningKeys) publishedKeys(ctx context.Context) ([]*signingKey, error) {
	if _, err := k.signer(ctx); err != nil {
		return nil, err
	}
	ring, err := k.current(ctx, k.opts.Reload)
	if err != nil {
		return nil, err
	}
	pub := k.published(ring)
	var out []*signingKey
	for i := len(ring.keys) - 1; i >= 0; i-- {
		if pub[ring.keys[i]] {
			out = append(out, ring.keys[i])
		}
	}
	return out, nil
}

// jwkNumbers returns the base64url modulus and exponent of pub, big-endian
// without leading zeros (RFC 7518 section 6.3.1).
func jwkNumbers(pub *rsa.PublicKey) (n, e string) {
	enc := base64.RawURLEncoding
	return enc.EncodeToString(pub.N.Bytes()), enc.EncodeToString(big.NewInt(int64(pub.E)).Bytes())
}

// thumbprint returns the RFC 7638 JWK thumbprint of pub, the key id.
func thumbprint(pub *rsa.PublicKey) string {
	n, e := jwkNumbers(pub)
	sum := sha256.Sum256([]byte(`{"e":"` + e + `","kty":"RSA","n":"` + n + `"}`))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
