package voiceprint

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

var testKey = bytes.Repeat([]byte{7}, 32)

// enrolled returns a template of a synthetic speaker.
func enrolled(t testing.TB, m Model) *Template {
	t.Helper()
	e := m.NewEnroller()
	if err := e.AddVectors(newSpeaker(m, 1, 0.5).vectors(nil, 600)); err != nil {
		t.Fatal(err)
	}
	tp, err := e.Template()
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// otherModel is the shipped model with one weight changed: another hash.
func otherModel(t testing.TB) Model {
	t.Helper()
	data, err := modelFiles.ReadFile("models/telephone-gmm64.bin")
	if err != nil {
		t.Fatal(err)
	}
	var def Definition
	if err := def.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	def.Weights[0] *= 1.01
	b, err := def.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseModel(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mutate(cred string, f func([]byte) []byte) string {
	raw, _ := base64.RawURLEncoding.DecodeString(cred)
	return base64.RawURLEncoding.EncodeToString(f(append([]byte(nil), raw...)))
}

func TestCredential(t *testing.T) {
	m := shipped(t)
	s, err := NewSealer(testKey)
	if err != nil {
		t.Fatal(err)
	}
	tp := enrolled(t, m)
	cred, err := s.Seal("acme", tp)
	if err != nil {
		t.Fatal(err)
	}
	otherKey, _ := NewSealer(bytes.Repeat([]byte{8}, 32))
	tenantLen := len("acme")
	cases := []struct {
		name   string
		sealer *Sealer
		tenant string
		model  Model
		cred   string
		want   error
	}{
		{"valid", s, "acme", m, cred, nil},
		{"other tenant", s, "globex", m, cred, ErrCredentialTenant},
		{"tenant prefix", s, "acm", m, cred, ErrCredentialTenant},
		{"other model", s, "acme", otherModel(t), cred, ErrCredentialModel},
		{"other key", otherKey, "acme", m, cred, ErrCredentialTampered},
		{"flipped ciphertext bit", s, "acme", m, mutate(cred, func(b []byte) []byte { b[len(b)-40] ^= 1; return b }), ErrCredentialTampered},
		{"flipped tag bit", s, "acme", m, mutate(cred, func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b }), ErrCredentialTampered},
		{"flipped nonce bit", s, "acme", m, mutate(cred, func(b []byte) []byte { b[2+tenantLen+32] ^= 1; return b }), ErrCredentialTampered},
		{"truncated", s, "acme", m, mutate(cred, func(b []byte) []byte { return b[:len(b)-1] }), ErrCredentialTampered},
		{"truncated to header", s, "acme", m, mutate(cred, func(b []byte) []byte { return b[:2+tenantLen+32+10] }), ErrCredentialTampered},
		{"truncated in header", s, "acme", m, mutate(cred, func(b []byte) []byte { return b[:20] }), ErrCredentialMalformed},
		{"extended", s, "acme", m, mutate(cred, func(b []byte) []byte { return append(b, 0) }), ErrCredentialTampered},
		{"unknown version", s, "acme", m, mutate(cred, func(b []byte) []byte { b[0] = 2; return b }), ErrCredentialVersion},
		{"tenant rewritten", s, "acmf", m, mutate(cred, func(b []byte) []byte { b[5] = 'f'; return b }), ErrCredentialTampered},
		{"model rewritten", s, "acme", otherModel(t), mutate(cred, func(b []byte) []byte {
			h := otherModel(t).c.hash
			copy(b[2+tenantLen:], h[:])
			return b
		}), ErrCredentialTampered},
		{"empty", s, "acme", m, "", ErrCredentialMalformed},
		{"not base64url", s, "acme", m, "a+b/c=", ErrCredentialMalformed},
		{"padded", s, "acme", m, cred + "==", ErrCredentialMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.sealer.Open(tc.tenant, tc.model, tc.cred)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Open: error %v, want %v", err, tc.want)
			}
			if err != nil {
				return
			}
			if got.ModelHash() != m.Hash || got.VoiceSeconds() != tp.VoiceSeconds() {
				t.Errorf("opened template: model %s, %.2f s; want %s, %.2f s", got.ModelHash(), got.VoiceSeconds(), m.Hash, tp.VoiceSeconds())
			}
			if !slicesEqual(got.q, tp.q) || !slicesEqual(got.scales, tp.scales) {
				t.Error("opened template differs from the sealed one")
			}
		})
	}
	if len(cred) > 4096 {
		t.Errorf("credential is %d bytes of text, want at most 4 KB", len(cred))
	}
	if h, err := CredentialModelHash(cred); err != nil || h != m.Hash {
		t.Errorf("CredentialModelHash = %q, %v; want %q", h, err, m.Hash)
	}
	cred2, _ := s.Seal("acme", tp)
	if cred2 == cred {
		t.Error("two seals of one template are identical: nonce reused")
	}
}

func slicesEqual[E comparable](a, b []E) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSealerArguments(t *testing.T) {
	b, _ := aes.NewCipher(testKey)
	gcm, _ := cipher.NewGCM(b)
	short, _ := cipher.NewGCMWithNonceSize(b, 16)
	cases := []struct {
		name string
		make func() (*Sealer, error)
		want error
	}{
		{"32-byte key", func() (*Sealer, error) { return NewSealer(testKey) }, nil},
		{"16-byte key", func() (*Sealer, error) { return NewSealer(testKey[:16]) }, ErrKey},
		{"no key", func() (*Sealer, error) { return NewSealer(nil) }, ErrKey},
		{"GCM", func() (*Sealer, error) { return NewSealerAEAD(gcm) }, nil},
		{"GCM with 16-byte nonces", func() (*Sealer, error) { return NewSealerAEAD(short) }, ErrKey},
		{"nil AEAD", func() (*Sealer, error) { return NewSealerAEAD(nil) }, ErrKey},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.make(); !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
	s, _ := NewSealer(testKey)
	tp := enrolled(t, shipped(t))
	for _, tenant := range []string{"", strings.Repeat("x", 256)} {
		if _, err := s.Seal(tenant, tp); !errors.Is(err, ErrTenant) {
			t.Errorf("Seal with a %d-byte tenant: %v, want ErrTenant", len(tenant), err)
		}
	}
	// A key behind the AEAD interface opens what NewSealer sealed.
	sa, _ := NewSealerAEAD(gcm)
	cred, _ := s.Seal("t", tp)
	if _, err := sa.Open("t", shipped(t), cred); err != nil {
		t.Errorf("NewSealerAEAD cannot open NewSealer's credential: %v", err)
	}
}

func TestOtherModelVerifier(t *testing.T) {
	tp := enrolled(t, shipped(t))
	if _, err := otherModel(t).NewVerifier(tp); !errors.Is(err, ErrCredentialModel) {
		t.Fatalf("NewVerifier with another model: %v, want ErrCredentialModel", err)
	}
}

// FuzzOpenCredential feeds arbitrary strings to Open: it must return one of
// the sentinel errors or a template that verifies, and never panic.
func FuzzOpenCredential(f *testing.F) {
	m := shipped(f)
	s, _ := NewSealer(testKey)
	cred, _ := s.Seal("acme", enrolled(f, m))
	f.Add(cred)
	f.Add("")
	f.Add("AQ")
	f.Add("AgRhY21l")
	f.Add(cred[:60])
	f.Add(mutate(cred, func(b []byte) []byte { b[0] = 9; return b }))
	f.Add(mutate(cred, func(b []byte) []byte { b[1] = 200; return b }))
	f.Fuzz(func(t *testing.T, c string) {
		tp, err := s.Open("acme", m, c)
		if err != nil {
			for _, e := range []error{ErrCredentialMalformed, ErrCredentialVersion, ErrCredentialTenant, ErrCredentialModel, ErrCredentialTampered} {
				if errors.Is(err, e) {
					return
				}
			}
			t.Fatalf("Open: unexpected error %v", err)
		}
		if _, err := m.NewVerifier(tp); err != nil {
			t.Fatalf("opened template does not verify: %v", err)
		}
		_, _ = CredentialModelHash(c)
	})
}
