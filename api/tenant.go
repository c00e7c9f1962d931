package api

import (
	"errors"
	"fmt"
	"math"
	"mime"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/earshot-voice/earshot/auth"
)

// Identity configures the OAuth identity provider, the tenant-scoped
// interface (/api/public/…) and the management interface
// (/management/v1/…). Issuer, Keys, KeyAdmin, AllowList and Admin are
// required; the zero value of every other field works.
type Identity struct {
	Issuer    *auth.Issuer
	Keys      *auth.Keys
	KeyAdmin  *auth.KeyAdmin
	AllowList *auth.AllowList
	Admin     *auth.Admin
	// Services are the services API keys may belong to. Default: streaming.
	Services []string
	// TrustedProxies are the networks of reverse proxies whose
	// X-Forwarded-For names the client. Default: none, the client address
	// is the socket peer.
	TrustedProxies []netip.Prefix
	// AddrLimiter limits failed authentications per client address (an
	// IPv6 client per /64). Default: 20 in a burst, then one every 3 s.
	AddrLimiter *auth.Limiter
	// KeyLimiter limits failed authentications per credential (API key or
	// admin token lookup, OAuth client id, admin user). Default: 10 in a
	// burst, then one every 6 s.
	KeyLimiter *auth.Limiter
	// Audit receives one entry per management change. Default: the
	// server's logger, named "audit".
	Audit *zap.Logger
}

// SecurityObserver counts what the identity provider and the
// authenticated interfaces do; *metrics.Metrics implements it. Every
// argument is a bounded enumeration. Methods must not block.
type SecurityObserver interface {
	// TokenRequest records a token request by grant (client_credentials,
	// refresh_token, other) and outcome (issued, or the error code).
	TokenRequest(grant, outcome string)
	// AuthFailure records a refused request by interface (streaming,
	// token, tenant, management) and reason.
	AuthFailure(iface, reason string)
	// ManagementChange records one change through the management
	// interface, by kind (api_key_created, allow_entry_removed, …).
	ManagementChange(kind string)
}

// Interfaces and reasons of SecurityObserver.AuthFailure.
const (
	ifaceStreaming  = "streaming"
	ifaceToken      = "token"
	ifaceTenant     = "tenant"
	ifaceManagement = "management"

	reasonMissing      = "missing"
	reasonInvalid      = "invalid"
	reasonExpired      = "expired"
	reasonWrongTenant  = "wrong_tenant"
	reasonForbidden    = "forbidden"
	reasonIPNotAllowed = "ip_not_allowed"
	reasonRateLimited  = "rate_limited"
)

// tenantHeader carries the tenant of a tenant-scoped request (spec 4.2).
const tenantHeader = "x-service-tenant-id"

// identityRoutes registers the identity provider, the tenant-scoped and
// the management routes when Options.Identity is set, after filling in
// its defaults.
func (s *Server) identityRoutes() {
	if s.opts.Identity == nil {
		return
	}
	id := *s.opts.Identity
	if len(id.Services) == 0 {
		id.Services = []string{auth.ServiceStreaming}
	}
	if id.AddrLimiter == nil {
		id.AddrLimiter = NewAddrLimiter()
	}
	if id.KeyLimiter == nil {
		id.KeyLimiter = NewKeyLimiter()
	}
	if id.Audit == nil {
		id.Audit = s.log.Named("audit")
	}
	s.opts.Identity = &id
	if s.opts.MaxUploadBytes <= 0 {
		s.opts.MaxUploadBytes = DefaultMaxUploadBytes
	}

	s.mux.HandleFunc("POST /auth/realms/{tenant}/protocol/openid-connect/token", s.token)
	s.mux.HandleFunc("GET /auth/realms/{tenant}/protocol/openid-connect/certs", s.certs)
	s.mux.HandleFunc("GET /auth/realms/{tenant}/.well-known/openid-configuration", s.discovery)
	s.mux.Handle("POST /api/public/singles", s.tenantScoped(s.singles))
	s.managementRoutes()
}

// NewAddrLimiter returns the default limiter of failed authentications
// per client address: 20 in a burst, then one every 3 s.
func NewAddrLimiter() *auth.Limiter {
	return auth.NewLimiter(auth.LimiterOptions{Burst: 20, Interval: 3 * time.Second})
}

// NewKeyLimiter returns the default limiter of failed authentications per
// credential: 10 in a burst, then one every 6 s.
func NewKeyLimiter() *auth.Limiter {
	return auth.NewLimiter(auth.LimiterOptions{Burst: 10, Interval: 6 * time.Second})
}

// authFailed counts a refused request.
func (s *Server) authFailed(iface, reason string) {
	if s.opts.Security != nil {
		s.opts.Security.AuthFailure(iface, reason)
	}
}

// clientAddr returns the address of the client: the socket peer, or, when
// the peer is a trusted proxy, the right-most address of X-Forwarded-For
// that is not itself a trusted proxy. A malformed or overlong
// X-Forwarded-For from a trusted proxy gives the invalid address, which no
// allow list admits: failing closed, since the proxy's own address may
// well be allow-listed.
func (s *Server) clientAddr(r *http.Request) netip.Addr {
	var trusted []netip.Prefix
	if s.opts.Identity != nil {
		trusted = s.opts.Identity.TrustedProxies
	}
	return ClientAddr(r, trusted)
}

// ClientAddr returns the address of r's client: the socket peer, or, when
// the peer is in trusted, the right-most address of X-Forwarded-For that
// is not itself in trusted. A malformed or overlong X-Forwarded-For from
// a trusted proxy gives the invalid address.
func ClientAddr(r *http.Request, trusted []netip.Prefix) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	peer := ap.Addr().Unmap()
	isTrusted := func(a netip.Addr) bool {
		return slices.ContainsFunc(trusted, func(p netip.Prefix) bool { return p.Contains(a) })
	}
	if !isTrusted(peer) {
		return peer
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	if len(hops) == 0 {
		return peer
	}
	if len(hops) > 32 {
		return netip.Addr{}
	}
	var a netip.Addr
	for i := len(hops) - 1; i >= 0; i-- {
		if a, err = parseHop(strings.TrimSpace(hops[i])); err != nil {
			return netip.Addr{}
		}
		if !isTrusted(a) {
			return a
		}
	}
	return a // every hop is a trusted proxy: the left-most is the client
}

// parseHop parses one X-Forwarded-For entry: an address, possibly with a
// port.
func parseHop(s string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return a.Unmap(), nil
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil || ap.Addr().Zone() != "" {
		return netip.Addr{}, fmt.Errorf("bad X-Forwarded-For entry")
	}
	return ap.Addr().Unmap(), nil
}

// limitAuth runs an authentication check under the failure limits: while
// the client address or the credential (credKey, "" if none) has no
// failures left it answers 429 with Retry-After without checking; a
// failure of check that counts (counts(err)) is charged to both.
func (s *Server) limitAuth(w http.ResponseWriter, r *http.Request, iface, credKey string, check func() error, counts func(error) bool) error {
	id := s.opts.Identity
	if id == nil {
		return check()
	}
	type charge struct {
		l   *auth.Limiter
		key string
	}
	var charges []charge
	if a := s.clientAddr(r); a.IsValid() {
		charges = append(charges, charge{id.AddrLimiter, auth.AddrKey(a)})
	}
	if credKey != "" {
		charges = append(charges, charge{id.KeyLimiter, credKey})
	}
	var wait time.Duration
	for _, c := range charges {
		wait = max(wait, c.l.Wait(c.key))
	}
	if wait > 0 {
		s.authFailed(iface, reasonRateLimited)
		secs := int(math.Ceil(wait.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		return newError(http.StatusTooManyRequests, CodeRateLimited,
			fmt.Sprintf("too many failed authentication attempts; retry after %d seconds", secs))
	}
	err := check()
	if err != nil && counts(err) {
		for _, c := range charges {
			c.l.Fail(c.key)
		}
	}
	return err
}

// isUnauthorized reports whether err answers 401.
func isUnauthorized(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusUnauthorized
}

// authenticateStreaming is authenticate under the failure limits.
func (s *Server) authenticateStreaming(w http.ResponseWriter, r *http.Request) (auth.Principal, error) {
	var p auth.Principal
	err := s.limitAuth(w, r, ifaceStreaming, auth.CredentialKey(r.Header.Get("apikey")), func() (err error) {
		p, err = s.authenticate(r)
		return err
	}, isUnauthorized)
	if reason := failureReason(err); err != nil && reason != "" && reason != "error" {
		s.authFailed(ifaceStreaming, reason)
	}
	return p, err
}

// failureReason is the AuthFailure reason of an authentication error.
func failureReason(err error) string {
	var e *Error
	if !errors.As(err, &e) {
		return "error"
	}
	switch {
	case e.Status == http.StatusTooManyRequests:
		return "" // counted where it was refused
	case e.Status == http.StatusForbidden && e.Code == CodeIPNotAllowed:
		return reasonIPNotAllowed
	case e.Status == http.StatusForbidden:
		return reasonForbidden
	case e == errNoAPIKey || e == errNoCredentials || e == errNoBearer || e == errNoTenant:
		return reasonMissing
	case e == errTokenExpired:
		return reasonExpired
	case e == errWrongTenant:
		return reasonWrongTenant
	}
	return reasonInvalid
}

// Errors of the tenant-scoped interface.
var (
	errNoTenant     = newError(http.StatusUnauthorized, CodeInvalidCredentials, "the "+tenantHeader+" header is missing")
	errNoBearer     = newError(http.StatusUnauthorized, CodeInvalidCredentials, "the Authorization header must be Bearer <access token>")
	errBadToken     = newError(http.StatusUnauthorized, CodeInvalidCredentials, "the access token is invalid")
	errTokenExpired = newError(http.StatusUnauthorized, CodeInvalidCredentials, "the access token has expired; request a new one")
	errWrongTenant  = newError(http.StatusUnauthorized, CodeInvalidCredentials, "the access token was issued for another tenant than "+tenantHeader+" names")
)

// tenantCaller is the client of a tenant-scoped request.
type tenantCaller struct {
	TenantID string
	ClientID string
	Scope    string
}

// tenantHandlerFunc is a handler of an authenticated tenant-scoped request.
type tenantHandlerFunc func(w http.ResponseWriter, r *http.Request, c tenantCaller) error

// tenantScoped authenticates a request of the tenant-scoped interface
// (spec 4.2 and 5.2): header x-service-tenant-id, and a Bearer access
// token of that tenant; then requires multipart/form-data (spec 4.5.6).
func (s *Server) tenantScoped(h tenantHandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := s.authenticateTenant(w, r)
		if err == nil {
			if err = requireMultipart(r); err == nil {
				err = h(w, r, c)
			}
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	})
}

func (s *Server) authenticateTenant(w http.ResponseWriter, r *http.Request) (tenantCaller, error) {
	var c tenantCaller
	err := s.limitAuth(w, r, ifaceTenant, "", func() error {
		tenant := r.Header.Get(tenantHeader)
		if tenant == "" {
			return errNoTenant
		}
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		token = strings.TrimSpace(token)
		if !strings.EqualFold(scheme, "Bearer") || token == "" {
			return errNoBearer
		}
		claims, err := s.opts.Identity.Issuer.Verify(r.Context(), tenant, token)
		switch {
		case errors.Is(err, auth.ErrTokenExpired):
			return errTokenExpired
		case errors.Is(err, auth.ErrWrongTenant):
			return errWrongTenant
		case errors.Is(err, auth.ErrInvalidCredentials):
			return errBadToken
		case err != nil:
			return err
		}
		c = tenantCaller{TenantID: tenant, ClientID: claims.AuthorizedParty, Scope: claims.Scope}
		return nil
	}, isUnauthorized)
	if err != nil {
		if isUnauthorized(err) {
			// RFC 6750 section 3.
			w.Header().Set("WWW-Authenticate", `Bearer realm="earshot", error="invalid_token"`)
		}
		if reason := failureReason(err); reason != "" && reason != "error" {
			s.authFailed(ifaceTenant, reason)
		}
	}
	return c, err
}

// requireMultipart checks that a request body is multipart/form-data with
// a boundary.
func requireMultipart(r *http.Request) error {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return newError(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType,
			"requests to /api/public/ must be multipart/form-data")
	}
	if params["boundary"] == "" {
		return newError(http.StatusBadRequest, CodeValidationFailed, "the multipart/form-data content type has no boundary")
	}
	return nil
}
