package audiohook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
	"time"
)

// This file verifies the HTTP message signature of an AudioHook upgrade
// (RFC 9421 lineage, HMAC-SHA256 with the key's client secret).

// requiredComponents must all be covered by the signature.
var requiredComponents = []string{
	"@request-target", "@authority", "audiohook-organization-id",
	"audiohook-session-id", "audiohook-correlation-id", "x-api-key",
}

// signatureLabel is the label Genesys signs with.
const signatureLabel = "sig1"

// minNonceLength is the shortest nonce accepted (the reference's rule).
const minNonceLength = 22

// signatureParams is the set of accepted signature parameters.
var signatureParams = map[string]bool{"keyid": true, "nonce": true, "alg": true, "created": true, "expires": true}

// freshness bounds the age of a signature. The skew is applied in the
// caller's favour (section 1.2, step 6).
type freshness struct {
	maxAge time.Duration
	skew   time.Duration
}

// signedRequest is what verification needs of an upgrade request.
type signedRequest struct {
	apiKey string
	nonce  string
	// expires is when the signature stops being acceptable: the nonce must
	// be remembered until then.
	expires time.Time
}

// verifySignature checks the Signature and Signature-Input headers of r
// against secret (the base64-decoded client secret). It returns a
// *SignatureError naming the reason of a failure. The caller checks
// replays of the returned nonce.
func verifySignature(r *http.Request, secret []byte, now time.Time, f freshness) (signedRequest, error) {
	sigHeader, inputHeader := headerValue(r, "Signature"), headerValue(r, "Signature-Input")
	if sigHeader == "" || inputHeader == "" {
		return signedRequest{}, &SignatureError{Reason: "missing"}
	}
	sigs, err := parseDictionary(sigHeader)
	if err != nil {
		return signedRequest{}, &SignatureError{Reason: "malformed"}
	}
	inputs, err := parseDictionary(inputHeader)
	if err != nil {
		return signedRequest{}, &SignatureError{Reason: "malformed"}
	}
	sig, okSig := sigs[signatureLabel]
	input, okInput := inputs[signatureLabel]
	if !okSig || !okInput || sig.isList || sig.item.kind != sfBinary || !input.isList {
		return signedRequest{}, &SignatureError{Reason: "malformed"}
	}

	covered := make([]string, 0, len(input.list))
	for _, it := range input.list {
		if it.kind != sfString {
			return signedRequest{}, &SignatureError{Reason: "malformed"}
		}
		covered = append(covered, it.str)
	}
	for _, want := range requiredComponents {
		if !contains(covered, want) {
			return signedRequest{}, &SignatureError{Reason: "components"}
		}
	}
	for _, p := range input.params {
		if !signatureParams[p.key] {
			return signedRequest{}, &SignatureError{Reason: "parameters"}
		}
	}
	alg, _ := input.param("alg")
	keyid, _ := input.param("keyid")
	nonce, _ := input.param("nonce")
	created, okCreated := input.param("created")
	expires, okExpires := input.param("expires")
	switch {
	case alg.kind != sfString || alg.str != "hmac-sha256":
		return signedRequest{}, &SignatureError{Reason: "algorithm"}
	case keyid.kind != sfString || !hmac.Equal([]byte(keyid.str), []byte(headerValue(r, "X-Api-Key"))):
		return signedRequest{}, &SignatureError{Reason: "keyid"}
	case nonce.kind != sfString || len(nonce.str) < minNonceLength:
		return signedRequest{}, &SignatureError{Reason: "nonce"}
	case !okCreated || created.kind != sfInteger || (okExpires && expires.kind != sfInteger):
		return signedRequest{}, &SignatureError{Reason: "parameters"}
	}

	base, err := signatureBase(r, covered, serializeInnerList(input))
	if err != nil {
		return signedRequest{}, err
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(base))
	if !hmac.Equal(m.Sum(nil), sig.item.bin) {
		return signedRequest{}, &SignatureError{Reason: "mismatch"}
	}

	createdAt := time.Unix(created.num, 0)
	expiresAt := createdAt.Add(f.maxAge + f.skew)
	if e := time.Unix(expires.num, 0).Add(f.skew); okExpires && e.Before(expiresAt) {
		expiresAt = e
	}
	switch {
	case f.maxAge <= 0:
		// Freshness disabled (tests of the documented vector only).
	case createdAt.After(now.Add(f.skew)):
		return signedRequest{}, &SignatureError{Reason: "future"}
	case createdAt.Before(now.Add(-f.maxAge - f.skew)):
		return signedRequest{}, &SignatureError{Reason: "stale"}
	case okExpires && time.Unix(expires.num, 0).Before(now.Add(-f.skew)):
		return signedRequest{}, &SignatureError{Reason: "expired"}
	}
	return signedRequest{apiKey: keyid.str, nonce: nonce.str, expires: expiresAt}, nil
}

// signatureBase builds the signature base of RFC 9421 section 2.5 for the
// covered components, ending with the @signature-params line.
func signatureBase(r *http.Request, covered []string, params string) (string, error) {
	var b strings.Builder
	for _, c := range covered {
		var v string
		switch c {
		case "@request-target":
			v = r.RequestURI
			if v == "" {
				v = r.URL.RequestURI()
			}
		case "@authority":
			v = strings.ToLower(r.Host)
		case "@method":
			v = r.Method
		default:
			if strings.HasPrefix(c, "@") || c != strings.ToLower(c) {
				return "", &SignatureError{Reason: "components"}
			}
			vals := r.Header.Values(c)
			if len(vals) == 0 {
				return "", &SignatureError{Reason: "components"}
			}
			for i := range vals {
				vals[i] = strings.Join(strings.Fields(vals[i]), " ")
			}
			v = strings.Join(vals, ", ")
		}
		b.WriteString(`"` + c + `": ` + v + "\n")
	}
	b.WriteString(`"@signature-params": ` + params)
	return b.String(), nil
}

// headerValue returns a header's values joined, trimmed.
func headerValue(r *http.Request, name string) string {
	return strings.TrimSpace(strings.Join(r.Header.Values(name), ", "))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// dummyHMAC spends the work of a signature check on an unknown key, so that
// timing does not tell known keys from unknown ones.
func dummyHMAC(r *http.Request) {
	var key [32]byte
	rand.Read(key[:])
	m := hmac.New(sha256.New, key[:])
	m.Write([]byte(headerValue(r, "Signature-Input")))
	m.Sum(nil)
}

// nonceCache remembers nonces of accepted signatures until they expire, to
// refuse replays. Nonces are kept per tenant, at most max of them per
// tenant: when a tenant's share is full, that tenant's new upgrades are
// refused rather than live nonces forgotten (a full share means a flood by
// a holder of that tenant's key), and other tenants are not affected.
// Memory is bounded by max times the tenants with live nonces, and
// tenants are made by the admin only.
type nonceCache struct {
	mu      sync.Mutex
	max     int
	tenants map[string]*tenantNonces
}

// tenantNonces are one tenant's live nonces.
type tenantNonces struct {
	seen   map[string]time.Time // nonce -> when it expires
	sweepN int                  // adds since the last sweep
}

func newNonceCache(max int) *nonceCache {
	return &nonceCache{max: max, tenants: make(map[string]*tenantNonces)}
}

// add records a nonce of tenant until expires. It reports false for a
// nonce the tenant already used (a replay) or when the tenant's share is
// full.
func (c *nonceCache) add(tenant, nonce string, expires, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.tenants[tenant]
	if t == nil {
		t = &tenantNonces{seen: make(map[string]time.Time)}
		c.tenants[tenant] = t
	}
	if exp, ok := t.seen[nonce]; ok && exp.After(now) {
		return false
	}
	if t.sweepN++; len(t.seen) >= c.max || t.sweepN >= 1024 {
		t.sweepN = 0
		for n, exp := range t.seen {
			if !exp.After(now) {
				delete(t.seen, n)
			}
		}
		if len(t.seen) >= c.max {
			return false
		}
		// Forget the tenants whose nonces have all expired meanwhile.
		for id, other := range c.tenants {
			if other != t && c.expired(other, now) {
				delete(c.tenants, id)
			}
		}
	}
	t.seen[nonce] = expires
	return true
}

// expired reports whether every nonce of t has expired.
func (c *nonceCache) expired(t *tenantNonces, now time.Time) bool {
	for _, exp := range t.seen {
		if exp.After(now) {
			return false
		}
	}
	return true
}
