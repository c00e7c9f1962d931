package audiohook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// SignHeaders adds the AudioHook identity headers and an HMAC-SHA256 HTTP
// message signature to h, as Genesys Cloud signs an upgrade: requestTarget
// is the path and query, authority the host[:port], secret the
// base64-decoded client secret, nonce at least 22 characters. The
// signature is valid for 30 s from now.
func SignHeaders(h http.Header, requestTarget, authority, apiKey string, secret []byte, nonce string, now time.Time) {
	signRequest(h, requestTarget, authority, apiKey, secret, nonce, now, now.Add(30*time.Second))
}

// setIDs sets the identity headers of an upgrade.
func setIDs(h http.Header, orgID, sessionID, correlationID string) {
	h.Set("Audiohook-Organization-Id", orgID)
	h.Set("Audiohook-Session-Id", sessionID)
	h.Set("Audiohook-Correlation-Id", correlationID)
}

func signRequest(h http.Header, requestTarget, authority, apiKey string, secret []byte, nonce string, created, expires time.Time) {
	h.Set("X-API-KEY", apiKey)
	var params strings.Builder
	params.WriteByte('(')
	for i, c := range requiredComponents {
		if i > 0 {
			params.WriteByte(' ')
		}
		params.WriteString(`"` + c + `"`)
	}
	params.WriteString(`);keyid="` + apiKey + `";nonce="` + nonce + `";alg="hmac-sha256";created=` +
		strconv.FormatInt(created.Unix(), 10) + ";expires=" + strconv.FormatInt(expires.Unix(), 10))
	var base strings.Builder
	for _, c := range requiredComponents {
		var v string
		switch c {
		case "@request-target":
			v = requestTarget
		case "@authority":
			v = strings.ToLower(authority)
		default:
			v = strings.TrimSpace(h.Get(c))
		}
		base.WriteString(`"` + c + `": ` + v + "\n")
	}
	base.WriteString(`"@signature-params": ` + params.String())
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(base.String()))
	h.Set("Signature-Input", signatureLabel+"="+params.String())
	h.Set("Signature", signatureLabel+"=:"+base64.StdEncoding.EncodeToString(m.Sum(nil))+":")
}
