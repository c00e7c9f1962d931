package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MasterKeySize is the length of the master key in bytes.
const MasterKeySize = 32

// MasterKey is the root secret from which Earshot derives the keys that hash
// and seal its secrets. Every replica sharing a store must use the same one.
type MasterKey struct {
	key [MasterKeySize]byte
}

// ParseMasterKey decodes a master key given as standard or URL-safe base64,
// or as hex.
func ParseMasterKey(s string) (MasterKey, error) {
	s = strings.TrimSpace(s)
	var mk MasterKey
	for _, dec := range []func(string) ([]byte, error){
		base64.StdEncoding.DecodeString,
		base64.RawStdEncoding.DecodeString,
		base64.URLEncoding.DecodeString,
		base64.RawURLEncoding.DecodeString,
		hex.DecodeString,
	} {
		if b, err := dec(s); err == nil && len(b) == MasterKeySize {
			copy(mk.key[:], b)
			return mk, nil
		}
	}
	return mk, ErrBadMasterKey
}

// LoadOrCreateMasterKey returns the master key from env when it is not
// empty, and otherwise reads it from path, creating the file (mode 0600,
// base64) with a new random key when it does not exist. created reports
// whether a new key file was written.
func LoadOrCreateMasterKey(env, path string) (mk MasterKey, created bool, err error) {
	if env != "" {
		mk, err = ParseMasterKey(env)
		return mk, false, err
	}
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		mk, err = ParseMasterKey(string(b))
		if err != nil {
			return mk, false, fmt.Errorf("%s: %w", path, err)
		}
		return mk, false, nil
	case !errors.Is(err, fs.ErrNotExist):
		return mk, false, err
	}
	if _, err := rand.Read(mk.key[:]); err != nil {
		return mk, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return mk, false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return mk, false, err
	}
	_, werr := f.WriteString(base64.StdEncoding.EncodeToString(mk.key[:]) + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(path)
		return mk, false, werr
	}
	return mk, true, nil
}

// Derive returns a 32-byte key for one purpose (HKDF-SHA256 with the purpose
// as info). Different purposes give independent keys.
func (mk MasterKey) Derive(purpose string) []byte {
	k, err := hkdf.Key(sha256.New, mk.key[:], nil, "earshot "+purpose, 32)
	if err != nil {
		// Only possible for absurd lengths; 32 bytes of SHA-256 cannot fail.
		panic(err)
	}
	return k
}

// NewAEAD returns AES-256-GCM keyed for one purpose.
func (mk MasterKey) NewAEAD(purpose string) cipher.AEAD {
	block, err := aes.NewCipher(mk.Derive(purpose))
	if err != nil {
		panic(err) // 32-byte keys are always valid
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return aead
}
