package auth

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

func FuzzParseMasterKey(f *testing.F) {
	raw := make([]byte, MasterKeySize)
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	for _, s := range []string{base64.StdEncoding.EncodeToString(raw), base64.RawURLEncoding.EncodeToString(raw),
		hex.EncodeToString(raw), " " + hex.EncodeToString(raw) + "\n", hex.EncodeToString(raw[:31]), "", "=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mk, err := ParseMasterKey(s)
		if err != nil {
			return
		}
		// Every spelling of the accepted key parses back to it. (Base64
		// without padding is decoded leniently: the unused low bits of
		// its last character are ignored, so several strings give one key.)
		b := mk.key[:]
		for _, sp := range []string{base64.StdEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b), hex.EncodeToString(b)} {
			if again, err := ParseMasterKey(sp); err != nil || again.key != mk.key {
				t.Fatalf("ParseMasterKey(%q) = %v: its own spelling %q does not parse back", s, err, sp)
			}
		}
	})
}

// FuzzVerifyAccessToken presents mutated tokens to the verifier: a token
// it accepts must be one it issued, byte for byte (the signature covers
// header and claims, and decoding is strict), and nothing panics.
func FuzzVerifyAccessToken(f *testing.F) {
	iss, _, _, s := newIssuer(f)
	g, err := iss.ClientCredentials(f.Context(), "t1", s["t1"], s["t1-secret"], "roles")
	if err != nil {
		f.Fatal(err)
	}
	issued := g.AccessToken
	head, rest, _ := strings.Cut(issued, ".")
	claims, sig, _ := strings.Cut(rest, ".")
	f.Add("t1", issued)
	f.Add("t2", issued)
	f.Add("t1", head+"."+claims+".")
	f.Add("t1", "eyJhbGciOiJub25lIn0."+claims+".")
	f.Add("t1", head+"."+claims+"."+sig+"=")
	f.Add("t1", "a.b.c.d")
	f.Fuzz(func(t *testing.T, tenant, token string) {
		got, err := iss.Verify(t.Context(), tenant, token)
		if err != nil {
			return
		}
		if token != issued || tenant != "t1" || got.Tenant != "t1" {
			t.Fatalf("accepted a token it did not issue: tenant %q token %q", tenant, token)
		}
	})
}
