package voiceprint

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
)

// CredentialVersion is the credential format this build writes.
//
// A credential is base64url (unpadded) of
//
//	header:  version (1 byte, 0x01) ‖ tenant length (1 byte) ‖ tenant ‖ model SHA-256 (32 bytes)
//	nonce:   12 random bytes
//	sealed:  AES-256-GCM(plaintext) with the header as associated data, 16-byte tag
//
// and the plaintext of a version 1 credential is
//
//	voice frames (uint32 LE) ‖ components (uint16 LE) ‖ dim (uint16 LE) ‖
//	scales (components × float32 LE) ‖ offsets (components·dim × int8)
//
// The tenant and the model hash travel in the clear so that a credential
// of another tenant or model is refused with a precise error; being
// associated data they cannot be altered without failing authentication.
// The shipped model (64 components × 39 dimensions) gives 2,760-byte
// plaintexts and credentials of 3,763 + about 4/3 × len(tenant) characters.
const CredentialVersion = 1

const (
	nonceSize = 12
	tagSize   = 16
)

// Sealer seals templates into credentials and opens them. It is safe for
// concurrent use.
type Sealer struct {
	aead cipher.AEAD
	rand io.Reader
}

// NewSealer returns a Sealer using AES-256-GCM with key, which must be 32
// bytes (the server derives it from its master key).
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, ErrKey
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	a, err := cipher.NewGCM(b)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: a, rand: rand.Reader}, nil
}

// NewSealerAEAD returns a Sealer using aead, which must take 12-byte
// nonces and add a 16-byte tag (AES-256-GCM as from NewSealer, or a key
// held elsewhere behind the same interface).
func NewSealerAEAD(aead cipher.AEAD) (*Sealer, error) {
	if aead == nil || aead.NonceSize() != nonceSize || aead.Overhead() != tagSize {
		return nil, ErrKey
	}
	return &Sealer{aead: aead, rand: rand.Reader}, nil
}

func header(tenant string, model []byte) ([]byte, error) {
	if len(tenant) == 0 || len(tenant) > 255 {
		return nil, ErrTenant
	}
	h := make([]byte, 0, 2+len(tenant)+32)
	h = append(h, CredentialVersion, byte(len(tenant)))
	h = append(h, tenant...)
	return append(h, model...), nil
}

// Seal returns the credential of t for tenant.
func (s *Sealer) Seal(tenant string, t *Template) (string, error) {
	h, err := header(tenant, t.model[:])
	if err != nil {
		return "", err
	}
	pt := make([]byte, 0, 8+4*t.k+len(t.q))
	pt = binary.LittleEndian.AppendUint32(pt, t.frames)
	pt = binary.LittleEndian.AppendUint16(pt, uint16(t.k))
	pt = binary.LittleEndian.AppendUint16(pt, uint16(t.d))
	for _, v := range t.scales {
		pt = binary.LittleEndian.AppendUint32(pt, math.Float32bits(v))
	}
	for _, v := range t.q {
		pt = append(pt, byte(v))
	}
	out := make([]byte, len(h)+nonceSize, len(h)+nonceSize+len(pt)+tagSize)
	copy(out, h)
	nonce := out[len(h):]
	if _, err := io.ReadFull(s.rand, nonce); err != nil {
		return "", fmt.Errorf("voiceprint: nonce: %w", err)
	}
	out = s.aead.Seal(out, nonce, pt, h)
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// CredentialModelHash returns the hex hash of the model a credential names
// in its header, without opening it (for a request that does not say
// which model to use). It does not authenticate anything.
func CredentialModelHash(credential string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(credential)
	if err != nil {
		return "", ErrCredentialMalformed
	}
	_, model, _, err := splitCredential(raw)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(model), nil
}

// splitCredential parses the clear header.
func splitCredential(raw []byte) (tenant string, model []byte, rest []byte, err error) {
	if len(raw) < 1 {
		return "", nil, nil, ErrCredentialMalformed
	}
	if raw[0] != CredentialVersion {
		return "", nil, nil, ErrCredentialVersion
	}
	if len(raw) < 2 {
		return "", nil, nil, ErrCredentialMalformed
	}
	n := int(raw[1])
	if n == 0 || len(raw) < 2+n+32 {
		return "", nil, nil, ErrCredentialMalformed
	}
	return string(raw[2 : 2+n]), raw[2+n : 2+n+32], raw[2+n+32:], nil
}

// Open authenticates and decodes a credential for tenant and model m. The
// errors are, in the order checked: ErrCredentialMalformed (not base64url
// or no complete header), ErrCredentialVersion, ErrCredentialTenant,
// ErrCredentialModel, ErrCredentialTampered (authentication failed: the
// credential was altered, truncated or sealed with another key).
func (s *Sealer) Open(tenant string, m Model, credential string) (*Template, error) {
	raw, err := base64.RawURLEncoding.DecodeString(credential)
	if err != nil {
		return nil, ErrCredentialMalformed
	}
	ten, model, rest, err := splitCredential(raw)
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare([]byte(ten), []byte(tenant)) != 1 {
		return nil, ErrCredentialTenant
	}
	if m.c == nil || subtle.ConstantTimeCompare(model, m.c.hash[:]) != 1 {
		return nil, ErrCredentialModel
	}
	if len(rest) < nonceSize+tagSize {
		return nil, ErrCredentialTampered
	}
	h := raw[:len(raw)-len(rest)]
	pt, err := s.aead.Open(nil, rest[:nonceSize], rest[nonceSize:], h)
	if err != nil {
		return nil, ErrCredentialTampered
	}
	t, err := decodeTemplate(pt)
	if err != nil {
		return nil, err
	}
	copy(t.model[:], model)
	if t.k != m.c.g.k || t.d != m.c.g.d {
		return nil, ErrCredentialModel
	}
	return t, nil
}

func decodeTemplate(pt []byte) (*Template, error) {
	if len(pt) < 8 {
		return nil, ErrCredentialMalformed
	}
	t := &Template{
		frames: binary.LittleEndian.Uint32(pt),
		k:      int(binary.LittleEndian.Uint16(pt[4:])),
		d:      int(binary.LittleEndian.Uint16(pt[6:])),
	}
	pt = pt[8:]
	if len(pt) != 4*t.k+t.k*t.d {
		return nil, ErrCredentialMalformed
	}
	t.scales = make([]float32, t.k)
	for i := range t.scales {
		v := math.Float32frombits(binary.LittleEndian.Uint32(pt[4*i:]))
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, ErrCredentialMalformed
		}
		t.scales[i] = v
	}
	pt = pt[4*t.k:]
	t.q = make([]int8, len(pt))
	for i, b := range pt {
		t.q[i] = int8(b)
	}
	return t, nil
}
