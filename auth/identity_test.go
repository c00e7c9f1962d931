package auth

import (
	"context"
	"crypto"
	"crypto/hmac"
	crand "crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestLimiter(t *testing.T) {
	c := newClock()
	l := NewLimiter(LimiterOptions{Burst: 3, Interval: 10 * time.Second, MaxKeys: 2, Now: c.Now})
	for i := range 3 {
		if w := l.Wait("a"); w != 0 {
			t.Fatalf("after %d failures Wait = %v, want 0", i, w)
		}
		l.Fail("a")
	}
	if w := l.Wait("a"); w != 10*time.Second {
		t.Fatalf("after the burst Wait = %v, want 10s", w)
	}
	if w := l.Wait("b"); w != 0 {
		t.Fatalf("another key is limited too: %v", w)
	}
	c.Advance(4 * time.Second)
	if w := l.Wait("a"); w != 6*time.Second {
		t.Fatalf("4 s later Wait = %v, want 6s", w)
	}
	c.Advance(6 * time.Second)
	if w := l.Wait("a"); w != 0 {
		t.Fatalf("one interval later Wait = %v, want 0", w)
	}
	l.Fail("a")
	if w := l.Wait("a"); w != 10*time.Second {
		t.Fatalf("one forgiven failure used again: Wait = %v, want 10s", w)
	}
	// Failures while refused do not deepen the debt beyond one interval.
	for range 50 {
		l.Fail("a")
	}
	if w := l.Wait("a"); w != 10*time.Second {
		t.Fatalf("after failing while refused Wait = %v, want 10s", w)
	}
	// The key set is bounded: a third key evicts the least recently used.
	l.Fail("b")
	l.Fail("c")
	if n := l.Len(); n != 2 {
		t.Fatalf("Len = %d, want 2", n)
	}
	if w := l.Wait("a"); w != 0 {
		t.Fatalf("evicted key still limited: %v", w)
	}
}

func TestAddrKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"192.0.2.7", "addr:192.0.2.7"},
		{"::ffff:192.0.2.7", "addr:192.0.2.7"},
		{"2001:db8:1:2:3:4:5:6", "addr:2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff::1", "addr:2001:db8:1:2::/64"},
	}
	for _, tt := range tests {
		if got := AddrKey(netip.MustParseAddr(tt.in)); got != tt.want {
			t.Errorf("AddrKey(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

var prefixCases = []struct {
	in, want string // want "" means refused
}{
	{"203.0.113.0/24", "203.0.113.0/24"},
	{"203.0.113.77/24", "203.0.113.0/24"},
	{"203.0.113.7", "203.0.113.7/32"},
	{" 10.0.0.0/8 ", "10.0.0.0/8"},
	{"0.0.0.0/0", "0.0.0.0/0"},
	{"2001:db8::/48", "2001:db8::/48"},
	{"2001:DB8:0:0::1/48", "2001:db8::/48"},
	{"2001:db8::1", "2001:db8::1/128"},
	{"::ffff:192.0.2.0/120", "192.0.2.0/24"},
	{"::ffff:192.0.2.1", "192.0.2.1/32"},
	{"::1", "::1/128"},
	{"", ""},
	{"10.0.0.0/33", ""},
	{"2001:db8::/129", ""},
	{"fe80::1%eth0", ""},
	{"10.0.0.256", ""},
	{"10.0.0.0/8/8", ""},
	{"example.com", ""},
	{"10.0.0.0/-1", ""},
	{strings.Repeat("1", 100), ""},
}

func TestParsePrefix(t *testing.T) {
	for _, tt := range prefixCases {
		t.Run(tt.in, func(t *testing.T) {
			p, err := ParsePrefix(tt.in)
			if tt.want == "" {
				if !errors.Is(err, ErrBadPrefix) {
					t.Fatalf("ParsePrefix = %v, %v; want ErrBadPrefix", p, err)
				}
				return
			}
			if err != nil || p.String() != tt.want {
				t.Fatalf("ParsePrefix = %v, %v; want %s", p, err, tt.want)
			}
		})
	}
}

func FuzzParsePrefix(f *testing.F) {
	for _, tt := range prefixCases {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePrefix(s)
		if err != nil {
			return
		}
		// Canonical and stable: parsing the output gives the output.
		again, err := ParsePrefix(p.String())
		if err != nil || again != p || p != p.Masked() || p.Addr().Is4In6() && p.Bits() >= 96 {
			t.Fatalf("ParsePrefix(%q) = %v, not canonical (again %v, %v)", s, p, again, err)
		}
	})
}

func TestLockOutGuard(t *testing.T) {
	e := func(id, tenant, service, cidr string) AllowEntry {
		return AllowEntry{ID: id, TenantID: tenant, Service: service, Prefix: netip.MustParsePrefix(cidr)}
	}
	lo := e("lo", "t1", "streaming", "127.0.0.0/8")
	wide := e("wide", "t1", "streaming", "0.0.0.0/0")
	otherSvc := e("o", "t1", "other", "127.0.0.0/8")
	otherTenant := e("x", "t2", "streaming", "127.0.0.0/8")
	caller := netip.MustParseAddr("127.0.0.1")
	tests := []struct {
		name    string
		service string
		entry   AllowEntry
		others  []AllowEntry
		want    error
	}{
		{"last entry admitting the caller", "streaming", lo, nil, ErrLockOut},
		{"another entry still admits", "streaming", lo, []AllowEntry{wide}, nil},
		{"only another service admits", "streaming", lo, []AllowEntry{otherSvc}, ErrLockOut},
		{"any service counts for the admin", "", lo, []AllowEntry{otherSvc}, nil},
		{"admin's last entry", "", lo, nil, ErrLockOut},
		{"entry does not admit the caller", "streaming", e("n", "t1", "streaming", "10.0.0.0/8"), nil, nil},
		{"entry of another service", "streaming", otherSvc, nil, nil},
		{"entry of another tenant", "streaming", otherTenant, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := LockOutGuard("t1", tt.service, caller, tt.entry, tt.others); !errors.Is(err, tt.want) {
				t.Fatalf("LockOutGuard = %v, want %v", err, tt.want)
			}
		})
	}
	if Covers([]AllowEntry{wide}, "", netip.Addr{}) {
		t.Error("Covers admitted an invalid address")
	}
	if !Covers([]AllowEntry{lo}, "streaming", netip.MustParseAddr("::ffff:127.0.0.1")) {
		t.Error("Covers refused an IPv4-mapped address")
	}
}

func TestAllowList(t *testing.T) {
	st := newIDStore()
	a := NewAllowList(st)
	ctx := t.Context()
	p := netip.MustParsePrefix("192.0.2.0/24")
	e, err := a.Add(ctx, "t1", "streaming", p)
	if err != nil || e.Prefix != p || e.ID == "" {
		t.Fatalf("Add = %+v, %v", e, err)
	}
	if _, err := a.Add(ctx, "t1", "streaming", p); !errors.Is(err, ErrConflict) {
		t.Fatalf("duplicate Add = %v, want ErrConflict", err)
	}
	if _, err := a.Add(ctx, "t1", "other", p); err != nil {
		t.Fatalf("same prefix for another service: %v", err)
	}
	caller := netip.MustParseAddr("192.0.2.9")
	guard := func(entry AllowEntry, others []AllowEntry) error {
		return LockOutGuard("t1", "streaming", caller, entry, others)
	}
	if _, err := a.Remove(ctx, e.ID, guard); !errors.Is(err, ErrLockOut) {
		t.Fatalf("Remove of the caller's last entry = %v, want ErrLockOut", err)
	}
	if list, _ := a.Entries(ctx, "t1"); len(list) != 2 {
		t.Fatalf("refused Remove deleted something: %v", list)
	}
	if _, err := a.Add(ctx, "t1", "streaming", netip.MustParsePrefix("192.0.0.0/16")); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Remove(ctx, e.ID, guard); err != nil || got.ID != e.ID {
		t.Fatalf("Remove with another entry admitting = %+v, %v", got, err)
	}
	if _, err := a.Remove(ctx, e.ID, guard); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Remove = %v, want ErrNotFound", err)
	}
}

// newIssuer returns an Issuer over a fresh store with tenants t1 and t2,
// a client of each, and a test clock.
func newIssuer(t testing.TB) (*Issuer, *idStore, *clock, map[string]string) {
	t.Helper()
	st, c, mk := newIDStore(), newClock(), testKey(1)
	keys := NewSigningKeys(st, mk, SigningKeysOptions{Now: c.Now})
	iss := NewIssuer(st, keys, mk, IssuerOptions{PublicURL: "https://earshot.example/", Now: c.Now})
	secrets := map[string]string{}
	for _, tenant := range []string{"t1", "t2"} {
		st.tenants[tenant] = Tenant{ID: tenant}
		cl, secret, err := iss.CreateClient(t.Context(), tenant)
		if err != nil {
			t.Fatal(err)
		}
		secrets[tenant] = cl.ID
		secrets[tenant+"-secret"] = secret
	}
	return iss, st, c, secrets
}

func oauthCode(err error) string {
	var oe *OAuthError
	if errors.As(err, &oe) {
		return oe.Code
	}
	if err == nil {
		return ""
	}
	return "error: " + err.Error()
}

func TestClientCredentialsAndVerify(t *testing.T) {
	iss, st, c, s := newIssuer(t)
	ctx := t.Context()
	g, err := iss.ClientCredentials(ctx, "t1", s["t1"], s["t1-secret"], "roles")
	if err != nil {
		t.Fatal(err)
	}
	if g.ExpiresIn != 300 || g.RefreshExpiresIn != 1800 || g.Scope != "roles" || g.RefreshToken == "" || g.SessionState == "" {
		t.Fatalf("grant = %+v", g)
	}
	claims, err := iss.Verify(ctx, "t1", g.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if claims.Issuer != "https://earshot.example/auth/realms/t1" || claims.Subject != s["t1"] || claims.AuthorizedParty != s["t1"] ||
		claims.Tenant != "t1" || claims.Scope != "roles" || claims.ID == "" || claims.SessionID != g.SessionState ||
		!claims.ExpiresAt.Equal(c.Now().Add(300*time.Second)) || !claims.IssuedAt.Equal(c.Now()) {
		t.Fatalf("claims = %+v", claims)
	}

	// The signature verifies by hand with the published key.
	set, err := iss.Keys().JWKS(ctx)
	if err != nil || len(set.Keys) != 1 {
		t.Fatalf("JWKS = %+v, %v", set, err)
	}
	verifyByHand(t, g.AccessToken, set.Keys[0])

	tests := []struct {
		name, tenant, clientID, secret, scope, want string
	}{
		{"wrong secret", "t1", s["t1"], s["t2-secret"], "roles", OAuthInvalidClient},
		{"unknown client", "t1", "nobody", s["t1-secret"], "roles", OAuthInvalidClient},
		{"client of another tenant", "t2", s["t1"], s["t1-secret"], "roles", OAuthInvalidClient},
		{"no secret", "t1", s["t1"], "", "roles", OAuthInvalidClient},
		{"no scope", "t1", s["t1"], s["t1-secret"], "", OAuthInvalidScope},
		{"other scope", "t1", s["t1"], s["t1-secret"], "roles admin", OAuthInvalidScope},
		{"repeated scope is fine", "t1", s["t1"], s["t1-secret"], "roles roles", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := iss.ClientCredentials(ctx, tt.tenant, tt.clientID, tt.secret, tt.scope)
			if got := oauthCode(err); got != tt.want {
				t.Fatalf("code %q, want %q", got, tt.want)
			}
		})
	}

	// Expiry: valid within the skew, refused after it.
	c.Advance(AccessTokenTTL + ClockSkew - time.Second)
	if _, err := iss.Verify(ctx, "t1", g.AccessToken); err != nil {
		t.Fatalf("token within the clock skew: %v", err)
	}
	c.Advance(2 * time.Second)
	if _, err := iss.Verify(ctx, "t1", g.AccessToken); !errors.Is(err, ErrTokenExpired) {
		t.Fatalf("expired token: %v, want ErrTokenExpired", err)
	}

	// Revoking the client refuses its tokens at once.
	g, _ = iss.ClientCredentials(ctx, "t1", s["t1"], s["t1-secret"], "roles")
	if err := iss.RevokeClient(ctx, s["t1"]); err != nil {
		t.Fatal(err)
	}
	if _, err := iss.Verify(ctx, "t1", g.AccessToken); !errors.Is(err, ErrInvalidCredentials) {
		t.Fatalf("token of a revoked client: %v", err)
	}
	if _, err := iss.Refresh(ctx, "t1", s["t1"], s["t1-secret"], g.RefreshToken, ""); oauthCode(err) != OAuthInvalidClient {
		t.Fatalf("refresh of a revoked client: %v", err)
	}
	for _, r := range st.refresh {
		if r.ClientID == s["t1"] && !r.Revoked {
			t.Fatal("a refresh token of the revoked client is still active")
		}
	}
	if err := iss.RevokeClient(ctx, s["t1"]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second revoke = %v", err)
	}
}

// verifyByHand checks an RS256 JWT with crypto/rsa and a JWK, without the
// JWT library.
func verifyByHand(t *testing.T, token string, k JWK) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	var header map[string]any
	raw, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if err := json.Unmarshal(raw, &header); err != nil || header["alg"] != "RS256" || header["kid"] != k.KID {
		t.Fatalf("header %s: %v", raw, err)
	}
	n, _ := base64.RawURLEncoding.DecodeString(k.N)
	e, _ := base64.RawURLEncoding.DecodeString(k.E)
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
		t.Fatalf("signature does not verify with the JWKS key: %v", err)
	}
}

func TestVerifyRejects(t *testing.T) {
	iss, _, c, s := newIssuer(t)
	ctx := t.Context()
	g, err := iss.ClientCredentials(ctx, "t1", s["t1"], s["t1-secret"], "roles")
	if err != nil {
		t.Fatal(err)
	}
	other, err := iss.ClientCredentials(ctx, "t2", s["t2"], s["t2-secret"], "roles")
	if err != nil {
		t.Fatal(err)
	}
	set, _ := iss.Keys().JWKS(ctx)
	kid := set.Keys[0].KID
	parts := strings.Split(g.AccessToken, ".")
	b64 := func(v any) string {
		j, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(j)
	}
	var payload map[string]any
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	json.Unmarshal(raw, &payload)
	withClaim := func(k string, v any) map[string]any {
		out := map[string]any{}
		for kk, vv := range payload {
			out[kk] = vv
		}
		out[k] = v
		return out
	}
	// Forged with the real key's public numbers as an HMAC secret.
	n, _ := base64.RawURLEncoding.DecodeString(set.Keys[0].N)
	hsInput := b64(map[string]any{"alg": "HS256", "typ": "JWT", "kid": kid}) + "." + parts[1]
	mac := hmac.New(sha256.New, n)
	mac.Write([]byte(hsInput))
	hs256 := hsInput + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	// Signed by a key of our own making under the real kid.
	forged := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims(payload))
	forged.Header["kid"] = kid
	foreign := mustRSA()
	forgedToken, _ := forged.SignedString(foreign)
	unknownKID := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims(payload))
	unknownKID.Header["kid"] = "nope"
	unknownKIDToken, _ := unknownKID.SignedString(foreign)

	tests := []struct {
		name, tenant, token string
		want                error
	}{
		{"empty", "t1", "", ErrInvalidCredentials},
		{"garbage", "t1", "hello", ErrInvalidCredentials},
		{"two parts", "t1", parts[0] + "." + parts[1], ErrInvalidCredentials},
		{"alg none", "t1", b64(map[string]any{"alg": "none", "typ": "JWT"}) + "." + parts[1] + ".", ErrInvalidCredentials},
		{"HS256 with the public key", "t1", hs256, ErrInvalidCredentials},
		{"tampered payload", "t1", parts[0] + "." + b64(withClaim("tenant", "t2")) + "." + parts[2], ErrInvalidCredentials},
		{"tampered signature", "t1", parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2])), ErrInvalidCredentials},
		{"foreign key, real kid", "t1", forgedToken, ErrInvalidCredentials},
		{"unknown kid", "t1", unknownKIDToken, ErrInvalidCredentials},
		{"other tenant's token", "t1", other.AccessToken, ErrWrongTenant},
		{"right token, other tenant named", "t2", g.AccessToken, ErrWrongTenant},
		{"oversized", "t1", strings.Repeat("a", 5000), ErrInvalidCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := iss.Verify(ctx, tt.tenant, tt.token); !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
	// A token issued in the future (beyond the skew) is refused.
	c.Advance(-time.Minute)
	if _, err := iss.Verify(ctx, "t1", g.AccessToken); !errors.Is(err, ErrInvalidCredentials) {
		t.Fatalf("token from the future: %v", err)
	}
}

var (
	rsaOnce sync.Once
	rsaKey  *rsa.PrivateKey
)

// mustRSA returns an RSA key that is not Earshot's, made once per run.
func mustRSA() *rsa.PrivateKey {
	rsaOnce.Do(func() {
		priv, err := rsa.GenerateKey(crand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		rsaKey = priv
	})
	return rsaKey
}

func TestRefresh(t *testing.T) {
	iss, st, c, s := newIssuer(t)
	ctx := t.Context()
	g, err := iss.ClientCredentials(ctx, "t1", s["t1"], s["t1-secret"], "roles")
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Minute)
	r1, err := iss.Refresh(ctx, "t1", s["t1"], s["t1-secret"], g.RefreshToken, "")
	if err != nil {
		t.Fatal(err)
	}
	if r1.RefreshToken == g.RefreshToken || r1.AccessToken == g.AccessToken || r1.SessionState != g.SessionState || r1.Scope != "roles" {
		t.Fatalf("refresh = %+v", r1)
	}
	if _, err := iss.Verify(ctx, "t1", r1.AccessToken); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tenant, clientID, secret, token, scope, want string
	}{
		{"wrong client", "t2", s["t2"], s["t2-secret"], r1.RefreshToken, "", OAuthInvalidGrant},
		{"wrong secret", "t1", s["t1"], "esc_x", r1.RefreshToken, "", OAuthInvalidClient},
		{"malformed", "t1", s["t1"], s["t1-secret"], "nope", "", OAuthInvalidGrant},
		{"unknown", "t1", s["t1"], s["t1-secret"], strings.Replace(r1.RefreshToken, r1.RefreshToken[4:8], "0000", 1), "", OAuthInvalidGrant},
		{"wider scope", "t1", s["t1"], s["t1-secret"], r1.RefreshToken, "roles admin", OAuthInvalidScope},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := iss.Refresh(ctx, tt.tenant, tt.clientID, tt.secret, tt.token, tt.scope)
			if got := oauthCode(err); got != tt.want {
				t.Fatalf("code %q, want %q", got, tt.want)
			}
		})
	}
	// Reusing the first token fails, and revokes the chain: the newest link
	// stops working too.
	if _, err := iss.Refresh(ctx, "t1", s["t1"], s["t1-secret"], g.RefreshToken, ""); oauthCode(err) != OAuthInvalidGrant {
		t.Fatalf("reused refresh token: %v", err)
	}
	if _, err := iss.Refresh(ctx, "t1", s["t1"], s["t1-secret"], r1.RefreshToken, ""); oauthCode(err) != OAuthInvalidGrant {
		t.Fatalf("refresh after reuse was detected: %v", err)
	}

	// A refresh token expires after RefreshTokenTTL, and is purged later.
	g2, _ := iss.ClientCredentials(ctx, "t1", s["t1"], s["t1-secret"], "roles")
	c.Advance(RefreshTokenTTL)
	if _, err := iss.Refresh(ctx, "t1", s["t1"], s["t1-secret"], g2.RefreshToken, "roles"); oauthCode(err) != OAuthInvalidGrant {
		t.Fatalf("expired refresh token: %v", err)
	}
	c.Advance(refreshPurgeEvery)
	before := len(st.refresh)
	if _, err := iss.ClientCredentials(ctx, "t1", s["t1"], s["t1-secret"], "roles"); err != nil {
		t.Fatal(err)
	}
	if after := len(st.refresh); after != 1 {
		t.Fatalf("%d refresh tokens before the purge, %d after; want 1 (the new one)", before, after)
	}

	// A chain ends RefreshSessionTTL after the client-credentials grant.
	g3, _ := iss.ClientCredentials(ctx, "t1", s["t1"], s["t1-secret"], "roles")
	tok := g3.RefreshToken
	for elapsed := time.Duration(0); elapsed < RefreshSessionTTL-20*time.Minute; elapsed += 20 * time.Minute {
		c.Advance(20 * time.Minute)
		r, err := iss.Refresh(ctx, "t1", s["t1"], s["t1-secret"], tok, "")
		if err != nil {
			t.Fatalf("refresh after %v: %v", elapsed, err)
		}
		tok = r.RefreshToken
		if r.RefreshExpiresIn <= 0 || r.RefreshExpiresIn > 1800 {
			t.Fatalf("refresh_expires_in %d", r.RefreshExpiresIn)
		}
	}
	c.Advance(20 * time.Minute)
	if _, err := iss.Refresh(ctx, "t1", s["t1"], s["t1-secret"], tok, ""); oauthCode(err) != OAuthInvalidGrant {
		t.Fatalf("refresh beyond the session lifetime: %v", err)
	}
}

func TestRefreshRace(t *testing.T) {
	iss, _, _, s := newIssuer(t)
	ctx := t.Context()
	g, err := iss.ClientCredentials(ctx, "t1", s["t1"], s["t1-secret"], "roles")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	results := make([]error, 8)
	for i := range results {
		wg.Go(func() {
			_, results[i] = iss.Refresh(ctx, "t1", s["t1"], s["t1-secret"], g.RefreshToken, "")
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range results {
		if err == nil {
			ok++
		} else if oauthCode(err) != OAuthInvalidGrant {
			t.Errorf("concurrent refresh: %v", err)
		}
	}
	if ok > 1 {
		t.Fatalf("%d concurrent refreshes with one token succeeded", ok)
	}
}

func TestSigningKeyRotation(t *testing.T) {
	st, c, mk := newIDStore(), newClock(), testKey(1)
	keys := NewSigningKeys(st, mk, SigningKeysOptions{Now: c.Now, Reload: time.Minute})
	ctx := t.Context()
	if err := keys.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := keys.Ensure(ctx); err != nil || len(st.sealed) != 1 {
		t.Fatalf("second Ensure: %v, %d keys", err, len(st.sealed))
	}
	for name, v := range st.sealed {
		if strings.Contains(string(v.Value), "PRIVATE") || !strings.HasPrefix(name, signingKeyPrefix) {
			t.Fatalf("key %s is not sealed", name)
		}
	}
	first, _ := keys.Info(ctx)
	if len(first) != 1 || !first[0].Active {
		t.Fatalf("Info = %+v", first)
	}
	oldKey, _ := keys.signer(ctx)

	c.Advance(time.Hour)
	info, err := keys.Rotate(ctx)
	if err != nil || info.KID == first[0].KID {
		t.Fatalf("Rotate = %+v, %v", info, err)
	}
	set, _ := keys.JWKS(ctx)
	if len(set.Keys) != 2 || set.Keys[0].KID != info.KID || set.Keys[1].KID != first[0].KID {
		t.Fatalf("JWKS after rotation = %+v", set)
	}
	// Tokens the old key signed still verify until they expire.
	if _, err := keys.publicKey(ctx, first[0].KID); err != nil {
		t.Fatalf("old key after rotation: %v", err)
	}
	c.Advance(keys.keep())
	set, _ = keys.JWKS(ctx)
	if len(set.Keys) != 1 || set.Keys[0].KID != info.KID {
		t.Fatalf("JWKS after the old key's tokens expired = %+v", set)
	}
	if _, err := keys.publicKey(ctx, first[0].KID); !errors.Is(err, errUnknownKID) {
		t.Fatalf("retired key: %v", err)
	}
	if _, err := keys.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	if len(st.sealed) != 2 {
		t.Fatalf("%d keys in the store after pruning, want 2", len(st.sealed))
	}
	if now, _ := keys.signer(ctx); now.kid == oldKey.kid {
		t.Fatal("the old key still signs")
	}

	// Another replica sees the new key once its copy is stale, or at once
	// when a token names it.
	replica := NewSigningKeys(st, mk, SigningKeysOptions{Now: c.Now, Reload: time.Minute})
	before, _ := replica.signer(ctx)
	latest, _ := keys.Rotate(ctx)
	c.Advance(time.Minute)
	if after, _ := replica.signer(ctx); after.kid != latest.KID || after.kid == before.kid {
		t.Fatalf("replica signs with %s, want %s", after.kid, latest.KID)
	}
	latest, _ = keys.Rotate(ctx)
	if _, err := replica.publicKey(ctx, latest.KID); !errors.Is(err, errUnknownKID) {
		t.Fatalf("replica re-read the store for an unknown kid at once: %v", err)
	}
	c.Advance(minKeyReload)
	if _, err := replica.publicKey(ctx, latest.KID); err != nil {
		t.Fatalf("replica does not find a new kid: %v", err)
	}

	// A wrong master key cannot open the keys.
	if _, err := NewSigningKeys(st, testKey(2), SigningKeysOptions{}).JWKS(ctx); err == nil {
		t.Fatal("keys opened with another master key")
	}
}

func TestSigningKeyLifetimeAndRace(t *testing.T) {
	st, c, mk := newIDStore(), newClock(), testKey(1)
	ctx := t.Context()
	// Replicas starting together create one first key.
	var wg sync.WaitGroup
	replicas := make([]*SigningKeys, 3)
	for i := range replicas {
		replicas[i] = NewSigningKeys(st, mk, SigningKeysOptions{Now: c.Now, Lifetime: 24 * time.Hour})
		wg.Go(func() {
			if err := replicas[i].Ensure(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if len(st.sealed) != 1 {
		t.Fatalf("%d keys after concurrent first starts, want 1", len(st.sealed))
	}
	first, _ := replicas[0].signer(ctx)
	c.Advance(24 * time.Hour)
	for _, r := range replicas {
		wg.Go(func() {
			if _, err := r.signer(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if len(st.sealed) != 2 {
		t.Fatalf("%d keys after concurrent rotation by age, want 2", len(st.sealed))
	}
	for _, r := range replicas {
		if k, _ := r.signer(ctx); k.kid == first.kid || k.generation != 2 {
			t.Fatalf("replica signs with generation %d", k.generation)
		}
	}
	// A failing store does not stop verification with the keys in memory.
	st.fail = errors.New("db down")
	c.Advance(time.Hour)
	if _, err := replicas[0].publicKey(ctx, first.kid); err != nil && !errors.Is(err, errUnknownKID) {
		t.Fatalf("verification during an outage: %v", err)
	}
	st.fail = nil
}

func TestThumbprint(t *testing.T) {
	// RFC 7638 section 3.1's example key and thumbprint.
	n, _ := base64.RawURLEncoding.DecodeString("0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw")
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: 65537}
	if got := thumbprint(pub); got != "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs" {
		t.Fatalf("thumbprint = %s", got)
	}
}

func TestAdmin(t *testing.T) {
	st, mk := newIDStore(), testKey(1)
	recs, creds := newInitialRecords(mk, NewSealer(mk), time.Now(), nil)
	st.users[recs.User.ID] = recs.User
	st.tokens[recs.AdminToken.Lookup] = recs.AdminToken
	st.tenants[recs.Tenant.ID] = recs.Tenant
	a := NewAdmin(st, mk)
	ctx := t.Context()

	p, err := a.Authenticate(ctx, creds.AdminToken)
	if err != nil || p.UserID != recs.User.ID || p.TenantID != DefaultTenant {
		t.Fatalf("Authenticate = %+v, %v", p, err)
	}
	// The token with its last character changed (to "A", or "B" when it
	// is an "A" already: a random token ends in one 1 time in 64).
	last := "A"
	if strings.HasSuffix(creds.AdminToken, "A") {
		last = "B"
	}
	for _, bad := range []string{"", "est_nope", creds.APIKey, creds.AdminToken[:len(creds.AdminToken)-1] + last} {
		if _, err := a.Authenticate(ctx, bad); !errors.Is(err, ErrInvalidCredentials) {
			t.Errorf("Authenticate(%q) = %v", bad, err)
		}
	}
	if !IsAdminToken(creds.AdminToken) || IsAdminToken(creds.APIKey) {
		t.Error("IsAdminToken")
	}
	if CredentialKey(creds.AdminToken) == "" || CredentialKey(creds.APIKey) == "" || CredentialKey("x") != "" ||
		CredentialKey(creds.APIKey) == CredentialKey(creds.AdminToken) {
		t.Error("CredentialKey")
	}

	if _, err := a.RotateToken(ctx, p, "wrong"); !errors.Is(err, ErrInvalidCredentials) {
		t.Fatalf("RotateToken with a wrong password = %v", err)
	}
	token, err := a.RotateToken(ctx, p, creds.AdminPassword)
	if err != nil || !IsAdminToken(token) {
		t.Fatalf("RotateToken = %q, %v", token, err)
	}
	if _, err := a.Authenticate(ctx, creds.AdminToken); !errors.Is(err, ErrInvalidCredentials) {
		t.Fatal("the old admin token still works after rotation")
	}
	if p2, err := a.Authenticate(ctx, token); err != nil || p2.UserID != p.UserID {
		t.Fatalf("new admin token: %+v, %v", p2, err)
	}

	tests := []struct {
		name, current, next string
		want                error
	}{
		{"too short", creds.AdminPassword, "short", ErrWeakPassword},
		{"too long", creds.AdminPassword, strings.Repeat("x", 1025), ErrWeakPassword},
		{"wrong current", "nope", "a long enough password", ErrInvalidCredentials},
		{"ok", creds.AdminPassword, "correct horse battery", nil},
		{"old password no longer works", creds.AdminPassword, "another long password", ErrInvalidCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := a.ChangePassword(ctx, p, tt.current, tt.next); !errors.Is(err, tt.want) {
				t.Fatalf("ChangePassword = %v, want %v", err, tt.want)
			}
		})
	}

	if _, err := a.CreateTenant(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateTenant(ctx, "acme"); !errors.Is(err, ErrConflict) {
		t.Fatalf("duplicate tenant = %v", err)
	}
	if _, err := a.Tenant(ctx, "Not Valid"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("invalid tenant id = %v", err)
	}
	if list, _ := a.Tenants(ctx); len(list) != 2 || list[0].ID != "acme" {
		t.Fatalf("Tenants = %+v", list)
	}
	for id, want := range map[string]bool{"default": true, "acme-2": true, "a": true, "-x": false, "UPPER": false,
		"": false, strings.Repeat("a", 64): false, "a/b": false} {
		if ValidTenantID(id) != want {
			t.Errorf("ValidTenantID(%q) != %v", id, want)
		}
	}
}

func TestAdminBoundsPasswordChecks(t *testing.T) {
	a := NewAdmin(newIDStore(), testKey(1))
	for range maxPasswordChecks {
		a.passwords <- struct{}{}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := a.withPasswordSlot(ctx, func() { t.Error("ran without a slot") }); !errors.Is(err, context.Canceled) {
		t.Fatalf("withPasswordSlot = %v", err)
	}
}

func TestKeyAdmin(t *testing.T) {
	st, mk := newIDStore(), testKey(1)
	ms := newMemStore()
	keys := NewKeys(ms, mk)
	ka := NewKeyAdmin(st)
	ctx := t.Context()
	k, err := keys.Create(ctx, NewKey{TenantID: "t1", Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	st.keys[k.Record.ID] = k.Record
	if list, _ := ka.List(ctx, "t1"); len(list) != 1 {
		t.Fatalf("List = %v", list)
	}
	if err := ka.Revoke(ctx, k.Record.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ka.Get(ctx, k.Record.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a revoked key = %v", err)
	}
	if err := ka.Revoke(ctx, k.Record.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Revoke = %v", err)
	}
	if list, _ := ka.List(ctx, "t1"); len(list) != 0 {
		t.Fatalf("List after revoke = %v", list)
	}
}

func ExampleParsePrefix() {
	for _, s := range []string{"203.0.113.77/24", "2001:DB8::1", "::ffff:10.1.2.3"} {
		p, _ := ParsePrefix(s)
		fmt.Println(p)
	}
	// Output:
	// 203.0.113.0/24
	// 2001:db8::1/128
	// 10.1.2.3/32
}
