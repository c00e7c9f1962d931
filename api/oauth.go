package api

import (
	"encoding/base64"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/earshot-voice/earshot/auth"
)

// tokenJSON is the provider's token response, with refresh_token and
// refresh_expires_in added so that standard OAuth clients can refresh.
type tokenJSON struct {
	AccessToken      string `json:"access_token"`
	ExpiresIn        int    `json:"expires_in"`
	RefreshExpiresIn int    `json:"refresh_expires_in"`
	RefreshToken     string `json:"refresh_token"`
	TokenType        string `json:"token_type"`
	NotBeforePolicy  int    `json:"not-before-policy"`
	SessionState     string `json:"session_state"`
	Scope            string `json:"scope"`
}

// oauthErrorJSON is the error body of the token endpoint: detail (spec
// 7.2) and the RFC 6749 section 5.2 fields standard clients read. A 429
// also carries the API's code and message.
type oauthErrorJSON struct {
	Code             string `json:"code,omitempty"`
	Message          string `json:"message,omitempty"`
	Detail           string `json:"detail"`
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// Grant labels of SecurityObserver.TokenRequest.
const (
	grantClientCredentials = "client_credentials"
	grantRefreshToken      = "refresh_token"
	grantOther             = "other"
)

// maxTokenRequestBytes bounds a token request body; real ones are a few
// hundred bytes.
const maxTokenRequestBytes = 8 << 10

// token serves POST /auth/realms/{tenant}/protocol/openid-connect/token
// (spec 4.3, RFC 6749 sections 4.4 and 6).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	grant := grantOther
	g, err := s.grant(w, r, &grant)
	outcome := "issued"
	if err != nil {
		outcome = s.writeOAuthError(w, r, err)
	} else {
		w.Header().Set("Pragma", "no-cache") // RFC 6749 section 5.1; writeJSON sets Cache-Control: no-store
		writeJSON(w, http.StatusOK, tokenJSON{
			AccessToken: g.AccessToken, ExpiresIn: g.ExpiresIn, RefreshExpiresIn: g.RefreshExpiresIn,
			RefreshToken: g.RefreshToken, TokenType: "bearer", SessionState: g.SessionState, Scope: g.Scope,
		})
	}
	if s.opts.Security != nil {
		s.opts.Security.TokenRequest(grant, outcome)
	}
}

func invalidRequest(desc string) *auth.OAuthError {
	return &auth.OAuthError{Code: auth.OAuthInvalidRequest, Description: desc}
}

// grant parses a token request and runs its grant. *grant is set to the
// grant's label as soon as it is known.
func (s *Server) grant(w http.ResponseWriter, r *http.Request, grant *string) (auth.Grant, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return auth.Grant{}, invalidRequest("the request must be application/x-www-form-urlencoded")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxTokenRequestBytes)
	if err := r.ParseForm(); err != nil {
		return auth.Grant{}, invalidRequest("the request body is not a form of at most 8 KiB")
	}
	form := r.PostForm // never the query string: secrets do not belong in URLs
	for k, v := range form {
		if len(v) > 1 {
			return auth.Grant{}, invalidRequest("parameter " + trimDesc(k) + " is repeated") // RFC 6749 section 3.2
		}
	}
	switch form.Get("grant_type") {
	case "":
		return auth.Grant{}, invalidRequest("grant_type is required")
	case grantClientCredentials:
		*grant = grantClientCredentials
	case grantRefreshToken:
		*grant = grantRefreshToken
	default:
		return auth.Grant{}, &auth.OAuthError{Code: auth.OAuthUnsupportedGrantType,
			Description: "grant_type must be client_credentials or refresh_token"}
	}
	clientID, secret, basic, err := clientCredentials(r, form)
	if err != nil {
		return auth.Grant{}, err
	}
	if basic {
		// RFC 6749 section 5.2: a 401 for a client that used the
		// Authorization header names the scheme it used.
		w.Header().Set("WWW-Authenticate", `Basic realm="earshot"`)
	}
	if *grant == grantRefreshToken && form.Get("refresh_token") == "" {
		return auth.Grant{}, invalidRequest("refresh_token is required")
	}
	tenant := r.PathValue("tenant")
	var g auth.Grant
	credKey := "client:" + trimDesc(tenant) + "/" + trimDesc(clientID)
	err = s.limitAuth(w, r, ifaceToken, credKey, func() (err error) {
		issuer := s.opts.Identity.Issuer
		if *grant == grantClientCredentials {
			g, err = issuer.ClientCredentials(r.Context(), tenant, clientID, secret, form.Get("scope"))
		} else {
			g, err = issuer.Refresh(r.Context(), tenant, clientID, secret, form.Get("refresh_token"), form.Get("scope"))
		}
		return err
	}, func(err error) bool {
		var oe *auth.OAuthError
		return errors.As(err, &oe) && (oe.Code == auth.OAuthInvalidClient || oe.Code == auth.OAuthInvalidGrant)
	})
	return g, err
}

// clientCredentials returns the client's id and secret from HTTP Basic
// authentication (RFC 6749 section 2.3.1: form-encoded, then base64) or
// from the form; basic reports which.
func clientCredentials(r *http.Request, form url.Values) (id, secret string, basic bool, err error) {
	scheme, value, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if strings.EqualFold(scheme, "Basic") {
		id, secret, ok := parseBasic(value)
		switch {
		case !ok:
			return "", "", true, &auth.OAuthError{Code: auth.OAuthInvalidClient, Description: "the Basic credentials are malformed"}
		case form.Get("client_secret") != "" || form.Get("client_id") != "" && form.Get("client_id") != id:
			return "", "", true, invalidRequest("send the client credentials once: in the Authorization header or in the form")
		}
		return id, secret, true, nil
	}
	id, secret = form.Get("client_id"), form.Get("client_secret")
	if id == "" || secret == "" {
		return "", "", false, &auth.OAuthError{Code: auth.OAuthInvalidClient, Description: "client_id and client_secret are required"}
	}
	return id, secret, false, nil
}

func parseBasic(value string) (id, secret string, ok bool) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(value))
	if err != nil {
		return "", "", false
	}
	rawID, rawSecret, found := strings.Cut(string(raw), ":")
	if !found {
		return "", "", false
	}
	if id, err = url.QueryUnescape(rawID); err != nil {
		return "", "", false
	}
	if secret, err = url.QueryUnescape(rawSecret); err != nil {
		return "", "", false
	}
	if id == "" || secret == "" {
		return "", "", false
	}
	return id, secret, true
}

// trimDesc bounds a client-supplied string quoted in a message or key.
func trimDesc(s string) string {
	if len(s) > 64 {
		return s[:64]
	}
	return s
}

// writeOAuthError answers a token request error and returns its outcome
// label.
func (s *Server) writeOAuthError(w http.ResponseWriter, r *http.Request, err error) string {
	var oe *auth.OAuthError
	var ae *Error
	switch {
	case errors.As(err, &oe):
		status := http.StatusBadRequest
		if oe.Code == auth.OAuthInvalidClient {
			status = http.StatusUnauthorized
		} else {
			w.Header().Del("WWW-Authenticate")
		}
		writeJSON(w, status, oauthErrorJSON{Detail: oe.Description, Error: oe.Code, ErrorDescription: oe.Description})
		return oe.Code
	case errors.As(err, &ae) && ae.Status == http.StatusTooManyRequests:
		w.Header().Del("WWW-Authenticate")
		writeJSON(w, ae.Status, oauthErrorJSON{Code: ae.Code, Message: ae.Message, Detail: ae.Message,
			Error: "temporarily_unavailable", ErrorDescription: ae.Message})
		return "rate_limited"
	}
	w.Header().Del("WWW-Authenticate")
	s.writeError(w, r, err)
	return "error"
}

// tenantOf returns the tenant a path names, answering 404 when it does not
// exist.
func (s *Server) tenantOf(w http.ResponseWriter, r *http.Request) (string, bool) {
	tenant := r.PathValue("tenant")
	_, err := s.opts.Identity.Issuer.Tenant(r.Context(), tenant)
	switch {
	case errors.Is(err, auth.ErrNotFound):
		writeError(w, newError(http.StatusNotFound, CodeNotFound, "no such realm"))
		return "", false
	case err != nil:
		s.writeError(w, r, err)
		return "", false
	}
	return tenant, true
}

// certs serves the JWKS of a realm (RFC 7517).
func (s *Server) certs(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.tenantOf(w, r); !ok {
		return
	}
	set, err := s.opts.Identity.Issuer.Keys().JWKS(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, set)
}

// discovery serves the OpenID Provider metadata of a realm (OpenID Connect
// Discovery 1.0, RFC 8414), limited to what Earshot implements: a token
// endpoint with two grants, and the keys.
func (s *Server) discovery(w http.ResponseWriter, r *http.Request) {
	tenant, ok := s.tenantOf(w, r)
	if !ok {
		return
	}
	iss := s.opts.Identity.Issuer.IssuerURL(tenant)
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                iss,
		"token_endpoint":                        iss + "/protocol/openid-connect/token",
		"jwks_uri":                              iss + "/protocol/openid-connect/certs",
		"grant_types_supported":                 []string{grantClientCredentials, grantRefreshToken},
		"token_endpoint_auth_methods_supported": []string{"client_secret_post", "client_secret_basic"},
		"scopes_supported":                      []string{auth.ScopeRoles},
		"response_types_supported":              []string{},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"claims_supported":                      []string{"iss", "sub", "azp", "exp", "iat", "jti", "tenant", "scope", "sid", "typ"},
	})
}
