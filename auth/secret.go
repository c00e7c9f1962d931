package auth

import (
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// secretBytes is the entropy of every secret Earshot generates.
const secretBytes = 32

// lookupBytes is the entropy of the public identifier embedded in a token.
const lookupBytes = 8

// Prefixes of the token kinds. A prefix makes a leaked secret recognisable
// to secret scanners and to people.
const (
	prefixAPIKey     = "esk"
	prefixAdminToken = "est"
	prefixOAuth      = "esc"
)

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("auth: crypto/rand failed: %v", err)) // never on supported systems
	}
	return b
}

// newToken returns a secret of the form prefix_lookup_secret and its lookup
// part. The lookup identifies the record; the whole string is the secret.
func newToken(prefix string) (token, lookup string) {
	lookup = hex.EncodeToString(randomBytes(lookupBytes))
	return prefix + "_" + lookup + "_" + base64.RawURLEncoding.EncodeToString(randomBytes(secretBytes)), lookup
}

// parseToken splits a token made by newToken. It checks the shape only.
func parseToken(prefix, token string) (lookup string, ok bool) {
	rest, found := strings.CutPrefix(token, prefix+"_")
	if !found || len(token) > 128 {
		return "", false
	}
	lookup, secret, found := strings.Cut(rest, "_")
	if !found || len(lookup) != 2*lookupBytes || len(secret) != base64.RawURLEncoding.EncodedLen(secretBytes) {
		return "", false
	}
	if _, err := hex.DecodeString(lookup); err != nil {
		return "", false
	}
	return lookup, true
}

// Hasher computes the at-rest digest of high-entropy secrets:
// HMAC-SHA256 under a key derived from the master key.
type Hasher struct {
	key []byte
}

// NewHasher returns the Hasher of a master key.
func NewHasher(mk MasterKey) *Hasher {
	return &Hasher{key: mk.Derive("secret digest v1")}
}

// Digest returns the at-rest form of secret.
func (h *Hasher) Digest(secret string) []byte {
	m := hmac.New(sha256.New, h.key)
	m.Write([]byte(secret))
	return m.Sum(nil)
}

// Equal reports, in constant time, whether secret matches digest.
func (h *Hasher) Equal(digest []byte, secret string) bool {
	return subtle.ConstantTimeCompare(digest, h.Digest(secret)) == 1
}

// Sealer seals secrets that must stay usable with AES-256-GCM. The
// associated data binds a sealed value to its record, so a sealed value
// copied onto another record does not open.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer returns the Sealer of a master key.
func NewSealer(mk MasterKey) *Sealer {
	return &Sealer{aead: mk.NewAEAD("secret seal v1")}
}

// Seal returns nonce||ciphertext of plaintext bound to ad.
func (s *Sealer) Seal(plaintext []byte, ad string) []byte {
	nonce := randomBytes(s.aead.NonceSize())
	return s.aead.Seal(nonce, nonce, plaintext, []byte(ad))
}

// Open reverses Seal.
func (s *Sealer) Open(sealed []byte, ad string) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n+s.aead.Overhead() {
		return nil, errSealed
	}
	pt, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(ad))
	if err != nil {
		return nil, errSealed
	}
	return pt, nil
}

// Argon2id parameters of password hashes (RFC 9106's second recommended
// option, with 64 MiB of memory).
const (
	argonTime    = 3
	argonMemory  = 64 * 1024
	argonThreads = 2
	argonKeyLen  = 32
)

// HashPassword returns an Argon2id hash of password in PHC string form.
func HashPassword(password string) string {
	salt := randomBytes(16)
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

// CheckPassword reports whether password matches a hash made by
// HashPassword. It compares in constant time.
func CheckPassword(hash, password string) bool {
	var version int
	var memory, iterations uint32
	var threads uint8
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &iterations, &threads); err != nil {
		return false
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) == 0 || len(want) > 64 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, iterations, memory, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}
