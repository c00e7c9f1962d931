package audiohook

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The signature test vector of the AudioHook protocol's documentation.
const (
	vectorAPIKey    = "SGVsbG8sIEkgYW0gdGhlIEFQSSBrZXkh"
	vectorSecret    = "MySuperSecretKeyTellNo-1!2@3#4$5" // base64-decoded client secret
	vectorSignature = "sig1=:NZBwyBHRRyRoeLqy1IzOa9VYBuI8TgMFt2GRDkDuJh4=:"
	vectorInput     = `sig1=("@request-target" "@authority" "audiohook-organization-id" "audiohook-session-id" "audiohook-correlation-id" "x-api-key");keyid="SGVsbG8sIEkgYW0gdGhlIEFQSSBrZXkh";nonce="VGhpc0lzQVVuaXF1ZU5vbmNl";alg="hmac-sha256";created=1641013200;expires=3282026430`
)

func vectorRequest() *http.Request {
	r := httptest.NewRequest("GET", "/api/v1/voicebiometrics/ws", nil)
	r.Host = "audiohook.example.com"
	r.Header.Set("Audiohook-Organization-Id", "d7934305-0972-4844-938e-9060eef73d05")
	r.Header.Set("Audiohook-Correlation-Id", "e160e428-53e2-487c-977d-96989bf5c99d")
	r.Header.Set("Audiohook-Session-Id", "30b0e395-84d3-4570-ac13-9a62d8f514c0")
	r.Header.Set("X-API-KEY", vectorAPIKey)
	r.Header.Set("Signature", vectorSignature)
	r.Header.Set("Signature-Input", vectorInput)
	return r
}

func TestSignatureTestVector(t *testing.T) {
	r := vectorRequest()
	got, err := verifySignature(r, []byte(vectorSecret), time.Now(), freshness{}) // freshness off: created is in 2022
	if err != nil {
		t.Fatalf("documented vector: %v", err)
	}
	if got.apiKey != vectorAPIKey || got.nonce != "VGhpc0lzQVVuaXF1ZU5vbmNl" {
		t.Fatalf("verified %+v", got)
	}
	base, err := signatureBase(r, requiredComponents, vectorInput[len("sig1="):])
	if err != nil {
		t.Fatal(err)
	}
	wantBase := `"@request-target": /api/v1/voicebiometrics/ws
"@authority": audiohook.example.com
"audiohook-organization-id": d7934305-0972-4844-938e-9060eef73d05
"audiohook-session-id": 30b0e395-84d3-4570-ac13-9a62d8f514c0
"audiohook-correlation-id": e160e428-53e2-487c-977d-96989bf5c99d
"x-api-key": SGVsbG8sIEkgYW0gdGhlIEFQSSBrZXkh
"@signature-params": ` + vectorInput[len("sig1="):]
	if base != wantBase {
		t.Errorf("signature base:\n%s\nwant:\n%s", base, wantBase)
	}
}

func TestSignatureFailures(t *testing.T) {
	created := time.Unix(1641013200, 0)
	fresh := freshness{maxAge: 10 * time.Second, skew: 3 * time.Second}
	tests := []struct {
		name   string
		edit   func(r *http.Request)
		secret string
		now    time.Time
		f      freshness
		reason string
	}{
		{"fresh at created", func(*http.Request) {}, vectorSecret, created, fresh, ""},
		{"12 s old (max age plus skew)", func(*http.Request) {}, vectorSecret, created.Add(13 * time.Second), fresh, ""},
		{"14 s old", func(*http.Request) {}, vectorSecret, created.Add(14 * time.Second), fresh, "stale"},
		{"3 s in the future", func(*http.Request) {}, vectorSecret, created.Add(-3 * time.Second), fresh, ""},
		{"4 s in the future", func(*http.Request) {}, vectorSecret, created.Add(-4 * time.Second), fresh, "future"},
		{"wrong secret", func(*http.Request) {}, "another secret", created, fresh, "mismatch"},
		{"no signature", func(r *http.Request) { r.Header.Del("Signature") }, vectorSecret, created, fresh, "missing"},
		{"no input", func(r *http.Request) { r.Header.Del("Signature-Input") }, vectorSecret, created, fresh, "missing"},
		{"other path", func(r *http.Request) { r.RequestURI = "/v1/audiohook" }, vectorSecret, created, fresh, "mismatch"},
		{"other host", func(r *http.Request) { r.Host = "evil.example.com" }, vectorSecret, created, fresh, "mismatch"},
		{"swapped ids", func(r *http.Request) {
			s, c := r.Header.Get("Audiohook-Session-Id"), r.Header.Get("Audiohook-Correlation-Id")
			r.Header.Set("Audiohook-Session-Id", c)
			r.Header.Set("Audiohook-Correlation-Id", s)
		}, vectorSecret, created, fresh, "mismatch"},
		{"other api key", func(r *http.Request) { r.Header.Set("X-API-KEY", "other") }, vectorSecret, created, fresh, "keyid"},
		{"signature not binary", func(r *http.Request) { r.Header.Set("Signature", `sig1="abc"`) }, vectorSecret, created, fresh, "malformed"},
		{"garbage signature", func(r *http.Request) { r.Header.Set("Signature", `sig1=:!!:`) }, vectorSecret, created, fresh, "malformed"},
		{"other label", func(r *http.Request) { r.Header.Set("Signature", strings.Replace(vectorSignature, "sig1", "sig2", 1)) }, vectorSecret, created, fresh, "malformed"},
		{"missing component", func(r *http.Request) {
			r.Header.Set("Signature-Input", strings.Replace(vectorInput, ` "x-api-key"`, "", 1))
		}, vectorSecret, created, fresh, "components"},
		{"unknown parameter", func(r *http.Request) { r.Header.Set("Signature-Input", vectorInput+`;tag="x"`) }, vectorSecret, created, fresh, "parameters"},
		{"other algorithm", func(r *http.Request) {
			r.Header.Set("Signature-Input", strings.Replace(vectorInput, "hmac-sha256", "rsa-pss-sha512", 1))
		}, vectorSecret, created, fresh, "algorithm"},
		{"short nonce", func(r *http.Request) {
			r.Header.Set("Signature-Input", strings.Replace(vectorInput, "VGhpc0lzQVVuaXF1ZU5vbmNl", "short", 1))
		}, vectorSecret, created, fresh, "nonce"},
		{"no created", func(r *http.Request) {
			r.Header.Set("Signature-Input", strings.Replace(vectorInput, ";created=1641013200", "", 1))
		}, vectorSecret, created, fresh, "parameters"},
		{"expired", func(r *http.Request) {
			r.Header.Set("Signature-Input", strings.Replace(vectorInput, "expires=3282026430", "expires=1641013201", 1))
		}, vectorSecret, created.Add(5 * time.Second), fresh, "mismatch"}, // re-signed params change the base
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := vectorRequest()
			tt.edit(r)
			_, err := verifySignature(r, []byte(tt.secret), tt.now, tt.f)
			var se *SignatureError
			switch {
			case tt.reason == "" && err != nil:
				t.Fatalf("err = %v, want none", err)
			case tt.reason != "" && (!errors.As(err, &se) || se.Reason != tt.reason):
				t.Fatalf("err = %v, want reason %q", err, tt.reason)
			}
		})
	}
}

func TestSignatureExpiresChecked(t *testing.T) {
	// Sign a request whose expires has passed, with a client signer, so
	// that only the expiry fails.
	now := time.Unix(1700000000, 0)
	r := httptest.NewRequest("GET", "/v1/audiohook", nil)
	r.Host = "earshot.example"
	setIDs(r.Header, "d7934305-0972-4844-938e-9060eef73d05", "30b0e395-84d3-4570-ac13-9a62d8f514c0", "e160e428-53e2-487c-977d-96989bf5c99d")
	r.Header.Set("X-API-KEY", "key")
	signRequest(r.Header, r.URL.RequestURI(), r.Host, "key", []byte("secret"), "0123456789abcdefghijklmnop", now.Add(-5*time.Second), now.Add(-4*time.Second))
	_, err := verifySignature(r, []byte("secret"), now, freshness{maxAge: 10 * time.Second, skew: 3 * time.Second})
	var se *SignatureError
	if !errors.As(err, &se) || se.Reason != "expired" {
		t.Fatalf("err = %v, want expired", err)
	}
}

func TestParseDictionary(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{`a=1, b=?0, c=("x" "y");p=1;q="s", d=:AQID:, e=tok/en, f=1.5, g`, true},
		{`a=1,`, false},
		{`A=1`, false},
		{`a=("x"`, false},
		{`a="unterminated`, false},
		{`a="bad\escape"`, false},
		{`a=1.2345`, false},
		{`a=1234567890123456`, false},
		{`a=:not base64:`, false},
		{`a=?2`, false},
		{`a=1;`, false},
		{``, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := parseDictionary(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("parseDictionary(%q) = %v, want ok=%v", tt.in, err, tt.ok)
			}
		})
	}
	d, _ := parseDictionary(vectorInput)
	if got := "sig1=" + serializeInnerList(d["sig1"]); got != vectorInput {
		t.Fatalf("round trip:\n%s\nwant\n%s", got, vectorInput)
	}
}

func FuzzParseDictionary(f *testing.F) {
	for _, s := range []string{vectorInput, vectorSignature, `a=1, b=?0, c=("x" "y");p=1`, `a="\"x\\"`, `*x=1.5`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDictionary(s)
		if err != nil {
			return
		}
		// What parses must serialise to something that parses to the same.
		for k, m := range d {
			if !m.isList {
				continue
			}
			again, err := parseDictionary(k + "=" + serializeInnerList(m))
			if err != nil || serializeInnerList(again[k]) != serializeInnerList(m) {
				t.Fatalf("round trip of %q failed: %v", s, err)
			}
		}
	})
}

func TestNonceCache(t *testing.T) {
	c := newNonceCache(2)
	now := time.Unix(1000, 0)
	if !c.add("t", "a", now.Add(time.Second), now) || c.add("t", "a", now.Add(time.Second), now) {
		t.Fatal("a nonce must be accepted once")
	}
	if !c.add("t", "b", now.Add(time.Second), now) || c.add("t", "c", now.Add(time.Second), now) {
		t.Fatal("a full cache must refuse new nonces")
	}
	later := now.Add(2 * time.Second)
	if !c.add("t", "c", later.Add(time.Second), later) || !c.add("t", "a", later.Add(time.Second), later) {
		t.Fatal("expired nonces must be forgotten")
	}
}

func TestNonceCachePartitionedByTenant(t *testing.T) {
	now := time.Now()
	c := newNonceCache(3)
	exp := now.Add(10 * time.Second)
	for i := range 3 {
		if !c.add("a", fmt.Sprint("nonce-", i), exp, now) {
			t.Fatalf("tenant a: nonce %d refused", i)
		}
	}
	if c.add("a", "nonce-3", exp, now) {
		t.Error("tenant a's full share took another nonce")
	}
	// Tenant a's flood does not lock tenant b out, and a nonce is a
	// tenant's own.
	for _, n := range []string{"nonce-0", "nonce-9"} {
		if !c.add("b", n, exp, now) {
			t.Errorf("tenant b: %s refused while tenant a is full", n)
		}
	}
	if c.add("b", "nonce-9", exp, now) {
		t.Error("tenant b: a replay was accepted")
	}
	// Once tenant a's nonces have expired, its share is free again, and
	// the emptied tenants are forgotten.
	later := exp.Add(time.Second)
	if !c.add("a", "nonce-3", later.Add(10*time.Second), later) {
		t.Error("tenant a: refused after its nonces expired")
	}
	if _, ok := c.tenants["b"]; ok {
		t.Error("tenant b's expired nonces are still held")
	}
}
