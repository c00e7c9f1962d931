package audiohook

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The parsers of what a client sends before and after the upgrade: the
// message envelope, durations, open's parameters and the signature
// headers. Each must refuse bad input with an error, never a panic, and
// what it accepts must hold the promised invariants.

func FuzzParseClientMessage(f *testing.F) {
	id := "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d"
	f.Add([]byte(`{"version":"2","id":"` + id + `","type":"ping","seq":2,"serverseq":1,"position":"PT1.5S","parameters":{}}`))
	f.Add([]byte(`{"version":"2","id":"` + id + `","type":"open","seq":1,"serverseq":0,"position":"PT0S","parameters":{"organizationId":"x","media":[]}}`))
	f.Add([]byte(`{"version":"1","id":"x","seq":-1}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"parameters":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseClientMessage(data)
		if err != nil {
			return
		}
		if m.Version != Version || !ValidUUID(m.ID) || m.Type == "" || m.Seq < 1 || m.ServerSeq == nil || *m.ServerSeq < 0 ||
			!isJSONObject(m.Parameters) {
			t.Fatalf("accepted an invalid envelope: %+v", m)
		}
		if _, err := ParseDuration(m.Position); err != nil && len(m.Position) <= 40 {
			t.Fatalf("accepted position %q that ParseDuration refuses: %v", m.Position, err)
		}
		// What was accepted survives a round trip through the wire form.
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseClientMessage(out)
		if err != nil || again.Seq != m.Seq || again.Type != m.Type || *again.ServerSeq != *m.ServerSeq {
			t.Fatalf("round trip of %s: %+v, %v", out, again, err)
		}
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"PT0S", "PT1.5S", "PT.5S", "PT999999999S", "PT1e3S", "P1D", "PT-1S", "PT1.S", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		if d < 0 || d > 1e9*time.Second {
			t.Fatalf("ParseDuration(%q) = %v, out of range", s, d)
		}
		if _, err := ParseDuration(FormatDuration(d)); err != nil {
			t.Fatalf("FormatDuration(%v) = %q does not parse: %v", d, FormatDuration(d), err)
		}
	})
}

func FuzzOpenParameters(f *testing.F) {
	f.Add([]byte(`{"organizationId":"` + testOrg + `","conversationId":"` + testCall + `","participant":{"id":"11111111-2222-4333-8444-555555555555"},"media":[{"type":"audio","format":"PCMU","channels":["external"],"rate":8000}]}`))
	f.Add([]byte(`{"participant":"x","media":[{"rate":"8000"}]}`))
	f.Add([]byte(`{"media":[{"type":"audio","channels":[],"rate":-1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p OpenParameters
		if err := json.Unmarshal(data, &p); err != nil {
			if msg := openDecodeError(err); !strings.HasPrefix(msg, "open: ") {
				t.Fatalf("decode error message %q", msg)
			}
			return
		}
		if err := validateOpen(p); err != nil {
			return
		}
		if !ValidUUID(p.OrganizationID) || !ValidUUID(p.ConversationID) || !ValidUUID(p.Participant.ID) {
			t.Fatalf("accepted open with invalid ids: %+v", p)
		}
		for _, m := range p.Media {
			if len(m.Channels) == 0 || len(m.Channels) > 2 || m.Rate <= 0 {
				t.Fatalf("accepted media %+v", m)
			}
			m.BytesPerSample() // must not panic on any accepted format
		}
	})
}

func FuzzVerifySignature(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	signed := http.Header{}
	setIDs(signed, testOrg, "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", "1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed")
	SignHeaders(signed, "/v1/audiohook", "example.com", signedKey, []byte(testSecret), "nonce-0123456789abcdefghij", now)
	f.Add(signed.Get("Signature"), signed.Get("Signature-Input"))
	fresh := freshness{maxAge: 10 * time.Second, skew: 3 * time.Second}
	verify := func(signature, input string) (signedRequest, error) {
		r := httptest.NewRequest("GET", "/v1/audiohook", nil)
		r.Host = "example.com"
		for k, v := range signed {
			r.Header[k] = v
		}
		r.Header.Set("Signature", signature)
		r.Header.Set("Signature-Input", input)
		return verifySignature(r, []byte(testSecret), now, fresh)
	}
	if _, err := verify(signed.Get("Signature"), signed.Get("Signature-Input")); err != nil {
		f.Fatalf("the signed seed does not verify: %v", err)
	}
	f.Add(`sig1=:AAAA:`, `sig1=("@request-target");keyid="k";nonce="n";alg="hmac-sha256";created=1;expires=2`)
	f.Add(`sig1=:@@:`, `sig1=(`)
	f.Fuzz(func(t *testing.T, signature, input string) {
		got, err := verify(signature, input)
		if err != nil {
			if reasonOf(err) == "unknown" {
				t.Fatalf("failure without a reason: %v", err)
			}
			return
		}
		if got.apiKey != signedKey || len(got.nonce) < minNonceLength || !got.expires.After(now.Add(-3*time.Second)) {
			t.Fatalf("accepted %+v", got)
		}
	})
}
