package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"unicode"

	"go.uber.org/zap"

	"github.com/earshot-voice/earshot/auth"
)

// Kinds of SecurityObserver.ManagementChange.
const (
	changeKeyCreated       = "api_key_created"
	changeKeyRevoked       = "api_key_revoked"
	changeAllowAdded       = "allow_entry_added"
	changeAllowRemoved     = "allow_entry_removed"
	changeClientCreated    = "oauth_client_created"
	changeClientRevoked    = "oauth_client_revoked"
	changeTenantCreated    = "tenant_created"
	changeSigningKey       = "signing_key_rotated"
	changeAdminPassword    = "admin_password_changed"
	changeAdminTokenRotate = "admin_token_rotated"
)

// Errors of the management interface.
var (
	errNoCredentials = newError(http.StatusUnauthorized, CodeInvalidCredentials,
		"send an apikey header, or Authorization: Bearer with the admin token")
	errTwoCredentials = newError(http.StatusUnauthorized, CodeInvalidCredentials,
		"send either an apikey header or an admin token, not both")
	errAdminOnly   = newError(http.StatusForbidden, CodeForbidden, "only the admin token may do this")
	errNoTenant404 = newError(http.StatusNotFound, CodeNotFound, "no such tenant")
)

// manager is the caller of a management request: the admin user (admin
// not nil) or an API key of role admin.
type manager struct {
	admin *auth.AdminPrincipal
	key   auth.Principal
	addr  netip.Addr
}

// home returns the caller's own tenant.
func (m manager) home() string {
	if m.admin != nil {
		return m.admin.TenantID
	}
	return m.key.TenantID
}

// actor names the caller in the audit log.
func (m manager) actor() string {
	if m.admin != nil {
		return "admin:" + m.admin.UserID
	}
	return "api_key:" + m.key.KeyID
}

type managementFunc func(w http.ResponseWriter, r *http.Request, m manager) error

// managementRoutes registers /management/v1/….
func (s *Server) managementRoutes() {
	for _, rt := range []struct {
		pattern   string
		h         managementFunc
		adminOnly bool
	}{
		{"GET /management/v1/api_keys", s.listKeys, false},
		{"POST /management/v1/api_keys", s.createKey, false},
		{"DELETE /management/v1/api_keys/{id}", s.revokeKey, false},
		{"GET /management/v1/ip_allowlist", s.listAllow, false},
		{"POST /management/v1/ip_allowlist", s.addAllow, false},
		{"DELETE /management/v1/ip_allowlist/{id}", s.removeAllow, false},
		{"GET /management/v1/oauth_clients", s.listClients, true},
		{"POST /management/v1/oauth_clients", s.createClient, true},
		{"DELETE /management/v1/oauth_clients/{id}", s.revokeClient, true},
		{"GET /management/v1/tenants", s.listTenants, true},
		{"POST /management/v1/tenants", s.createTenant, true},
		{"GET /management/v1/signing_keys", s.listSigningKeys, true},
		{"POST /management/v1/signing_keys", s.rotateSigningKey, true},
		{"PUT /management/v1/admin/password", s.changePassword, true},
		{"POST /management/v1/admin/token", s.rotateAdminToken, true},
	} {
		s.mux.Handle(rt.pattern, s.management(rt.h, rt.adminOnly))
	}
}

// management authenticates a management request and checks its client
// address against the allow list (spec 5.1).
func (s *Server) management(h managementFunc, adminOnly bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, err := s.authenticateManager(w, r, adminOnly)
		if err == nil {
			err = h(w, r, m)
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	})
}

func (s *Server) authenticateManager(w http.ResponseWriter, r *http.Request, adminOnly bool) (manager, error) {
	id := s.opts.Identity
	m := manager{addr: s.clientAddr(r)}
	apiKey := r.Header.Get("apikey")
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	bearer := strings.EqualFold(scheme, "Bearer") && token != ""
	cred := apiKey
	if bearer {
		cred = token
	}
	err := s.limitAuth(w, r, ifaceManagement, auth.CredentialKey(cred), func() error {
		switch {
		case apiKey != "" && bearer:
			return errTwoCredentials
		case bearer:
			p, err := id.Admin.Authenticate(r.Context(), token)
			if errors.Is(err, auth.ErrInvalidCredentials) {
				return errBadAPIKey
			}
			m.admin = &p
			return err
		case apiKey != "":
			p, err := id.Keys.Authenticate(r.Context(), apiKey)
			if errors.Is(err, auth.ErrInvalidCredentials) {
				return errBadAPIKey
			}
			m.key = p
			return err
		}
		return errNoCredentials
	}, isUnauthorized)
	if err == nil {
		err = s.authorizeManager(r, m, adminOnly)
	}
	if reason := failureReason(err); err != nil && reason != "" && reason != "error" {
		s.authFailed(ifaceManagement, reason)
	}
	return m, err
}

// authorizeManager applies the role, admin-only and allow-list rules.
func (s *Server) authorizeManager(r *http.Request, m manager, adminOnly bool) error {
	if m.admin == nil {
		if adminOnly {
			return errAdminOnly
		}
		if m.key.Role != auth.RoleAdmin {
			return newError(http.StatusForbidden, CodeForbidden, "this API key has role "+m.key.Role+"; the management interface needs role admin")
		}
	}
	// The admin token is checked against every service's entries of its
	// home tenant; an API key against its own service's.
	entries, err := s.opts.Identity.AllowList.Entries(r.Context(), m.home())
	if err != nil {
		return err
	}
	if !auth.Covers(entries, m.key.Service, m.addr) {
		what := "tenant " + m.home()
		if m.admin == nil {
			what = "service " + m.key.Service
		}
		addr := "this address"
		if m.addr.IsValid() {
			addr = m.addr.String()
		}
		return newError(http.StatusForbidden, CodeIPNotAllowed, fmt.Sprintf("requests from %s are not in the IP allow list of %s", addr, what))
	}
	return nil
}

// scope resolves the tenant and service a request targets. API keys
// target their own tenant and service: naming another service is 403,
// naming another tenant 403. The admin targets any existing tenant (its
// own by default) and any service ("" for all, where allowed).
func (s *Server) scope(r *http.Request, m manager, tenant, service string) (string, string, error) {
	if m.admin == nil {
		if tenant != "" && tenant != m.key.TenantID {
			return "", "", newError(http.StatusForbidden, CodeForbidden, "an API key manages only its own tenant")
		}
		if service != "" && service != m.key.Service {
			return "", "", forbiddenService(m.key.Service)
		}
		return m.key.TenantID, m.key.Service, nil
	}
	if tenant == "" {
		return m.home(), service, nil
	}
	if _, err := s.opts.Identity.Admin.Tenant(r.Context(), tenant); err != nil {
		if errors.Is(err, auth.ErrNotFound) {
			return "", "", errNoTenant404
		}
		return "", "", err
	}
	return tenant, service, nil
}

func forbiddenService(own string) *Error {
	return newError(http.StatusForbidden, CodeForbidden,
		"an API key of service "+own+" cannot manage another service's keys or allow list (use that service's key)")
}

// audit logs a management change, without secrets, and counts it.
func (s *Server) audit(r *http.Request, m manager, kind string, fields ...zap.Field) {
	s.opts.Identity.Audit.Info("management change", append([]zap.Field{
		zap.String("change", kind), zap.String("actor", m.actor()), zap.String("actor_tenant", m.home()),
		zap.String("client_addr", m.addr.String()), zap.String("request_id", requestIDFrom(r.Context())),
	}, fields...)...)
	if s.opts.Security != nil {
		s.opts.Security.ManagementChange(kind)
	}
}

// optionalBool reads a boolean field that may be absent or null.
func optionalBool(o *object, field string) bool {
	v, ok := o.raw[field]
	if !ok || string(v) == "null" {
		return false
	}
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		o.fail(field, "must be true or false")
	}
	return b
}

// checkService records an error unless service is configured.
// createScope resolves where a management POST creates its record: the
// caller's scope (scope), an unknown tenant_id and a service outside the
// configured set recorded as field errors in o, the service defaulting to
// streaming. A returned error ends the request.
func (s *Server) createScope(r *http.Request, m manager, o *object, tenantField, serviceField string) (tenant, service string, err error) {
	tenant, service, err = s.scope(r, m, tenantField, serviceField)
	if errors.Is(err, errNoTenant404) {
		o.fail("tenant_id", "no such tenant")
	} else if err != nil {
		return "", "", err
	}
	if service == "" {
		service = auth.ServiceStreaming
	}
	if !slices.Contains(s.opts.Identity.Services, service) {
		o.fail("service", "must be one of: "+strings.Join(s.opts.Identity.Services, ", "))
	}
	return tenant, service, nil
}

// printable reports whether s has only printable characters.
func printable(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) })
}

type apiKeyJSON struct {
	ID              string `json:"id"`
	TenantID        string `json:"tenant_id"`
	Service         string `json:"service"`
	Role            string `json:"role"`
	Name            string `json:"name"`
	AudioHookSecret bool   `json:"audiohook_secret"`
	CreatedAt       string `json:"created_at"`
	// Shown once, at creation.
	Key                   string `json:"key,omitempty"`
	AudioHookClientSecret string `json:"audiohook_client_secret,omitempty"`
}

func renderKey(k auth.APIKey) apiKeyJSON {
	return apiKeyJSON{ID: k.ID, TenantID: k.TenantID, Service: k.Service, Role: k.Role, Name: k.Name,
		AudioHookSecret: k.AudioHookSecret != nil, CreatedAt: httpDate(k.CreatedAt)}
}

func (s *Server) listKeys(w http.ResponseWriter, r *http.Request, m manager) error {
	return listScoped(s, w, r, m, s.opts.Identity.KeyAdmin.List,
		func(k auth.APIKey) string { return k.Service }, renderKey)
}

// listScoped answers GET of a tenant's records of one service (or of all,
// for the admin token without ?service=): the scope the caller may see,
// its records, filtered and rendered as {items: [...]}.
func listScoped[T, J any](s *Server, w http.ResponseWriter, r *http.Request, m manager,
	fetch func(ctx context.Context, tenant string) ([]T, error), service func(T) string, render func(T) J) error {
	q := r.URL.Query()
	tenant, svc, err := s.scope(r, m, q.Get("tenant_id"), q.Get("service"))
	if err != nil {
		return err
	}
	records, err := fetch(r.Context(), tenant)
	if err != nil {
		return err
	}
	items := []J{}
	for _, rec := range records {
		if svc == "" || service(rec) == svc {
			items = append(items, render(rec))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
	return nil
}

func (s *Server) createKey(w http.ResponseWriter, r *http.Request, m manager) error {
	o, err := decodeObject(w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	tenantField := o.optionalString("tenant_id", "")
	serviceField := o.optionalString("service", "")
	req := auth.NewKey{
		Role:            o.optionalString("role", auth.RoleUser),
		Name:            o.optionalString("name", ""),
		AudioHookSecret: optionalBool(o, "audiohook_secret"),
	}
	if err := o.err(); err != nil { // types first: a wrong type is no scope question
		return err
	}
	tenant, service, err := s.createScope(r, m, o, tenantField, serviceField)
	if err != nil {
		return err
	}
	if req.Role != auth.RoleAdmin && req.Role != auth.RoleUser {
		o.fail("role", "must be admin or user")
	}
	if len(req.Name) > 128 || !printable(req.Name) {
		o.fail("name", "must be at most 128 printable characters")
	}
	if err := o.err(); err != nil {
		return err
	}
	req.TenantID, req.Service = tenant, service
	issued, err := s.opts.Identity.Keys.Create(r.Context(), req)
	if err != nil {
		return err
	}
	s.audit(r, m, changeKeyCreated, zap.String("tenant_id", tenant), zap.String("service", service),
		zap.String("key_id", issued.Record.ID), zap.String("role", req.Role), zap.Bool("audiohook_secret", req.AudioHookSecret))
	out := renderKey(issued.Record)
	out.Key, out.AudioHookClientSecret = issued.Key, issued.AudioHookSecret
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request, m manager) error {
	ka := s.opts.Identity.KeyAdmin
	k, err := ka.Get(r.Context(), r.PathValue("id"))
	if errors.Is(err, auth.ErrNotFound) || err == nil && m.admin == nil && k.TenantID != m.key.TenantID {
		return newError(http.StatusNotFound, CodeNotFound, "no such API key")
	}
	if err != nil {
		return err
	}
	if m.admin == nil {
		if k.Service != m.key.Service {
			return forbiddenService(m.key.Service)
		}
		if k.ID == m.key.KeyID {
			return newError(http.StatusConflict, CodeConflict,
				"an API key cannot revoke itself: that would lock you out; use another admin key or the admin token")
		}
	}
	if err := ka.Revoke(r.Context(), k.ID); err != nil {
		if errors.Is(err, auth.ErrNotFound) {
			return newError(http.StatusNotFound, CodeNotFound, "no such API key")
		}
		return err
	}
	s.audit(r, m, changeKeyRevoked, zap.String("tenant_id", k.TenantID), zap.String("service", k.Service), zap.String("key_id", k.ID))
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type allowJSON struct {
	ID        string `json:"id"`
	TenantID  string `json:"tenant_id"`
	Service   string `json:"service"`
	CIDR      string `json:"cidr"`
	CreatedAt string `json:"created_at"`
}

func renderAllow(e auth.AllowEntry) allowJSON {
	return allowJSON{ID: e.ID, TenantID: e.TenantID, Service: e.Service, CIDR: e.Prefix.String(), CreatedAt: httpDate(e.CreatedAt)}
}

func (s *Server) listAllow(w http.ResponseWriter, r *http.Request, m manager) error {
	return listScoped(s, w, r, m, s.opts.Identity.AllowList.Entries,
		func(e auth.AllowEntry) string { return e.Service }, renderAllow)
}

func (s *Server) addAllow(w http.ResponseWriter, r *http.Request, m manager) error {
	o, err := decodeObject(w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	cidr := o.string("cidr")
	tenantField := o.optionalString("tenant_id", "")
	serviceField := o.optionalString("service", "")
	if err := o.err(); err != nil {
		return err
	}
	tenant, service, err := s.createScope(r, m, o, tenantField, serviceField)
	if err != nil {
		return err
	}
	prefix, perr := auth.ParsePrefix(cidr)
	if perr != nil {
		o.fail("cidr", "must be an IPv4 or IPv6 address or CIDR prefix, e.g. 203.0.113.0/24 or 2001:db8::/48")
	}
	if err := o.err(); err != nil {
		return err
	}
	e, err := s.opts.Identity.AllowList.Add(r.Context(), tenant, service, prefix)
	if errors.Is(err, auth.ErrConflict) {
		return newError(http.StatusConflict, CodeConflict, fmt.Sprintf("%s is already in the allow list of service %s", prefix, service))
	}
	if err != nil {
		return err
	}
	s.audit(r, m, changeAllowAdded, zap.String("tenant_id", tenant), zap.String("service", service),
		zap.String("entry_id", e.ID), zap.String("cidr", e.Prefix.String()))
	writeJSON(w, http.StatusCreated, renderAllow(e))
	return nil
}

func (s *Server) removeAllow(w http.ResponseWriter, r *http.Request, m manager) error {
	notFound := newError(http.StatusNotFound, CodeNotFound, "no such allow-list entry")
	e, err := s.opts.Identity.AllowList.Remove(r.Context(), r.PathValue("id"), func(e auth.AllowEntry, others []auth.AllowEntry) error {
		if m.admin == nil {
			if e.TenantID != m.key.TenantID {
				return notFound
			}
			if e.Service != m.key.Service {
				return forbiddenService(m.key.Service)
			}
		}
		return auth.LockOutGuard(m.home(), m.key.Service, m.addr, e, others)
	})
	switch {
	case errors.Is(err, auth.ErrNotFound):
		return notFound
	case errors.Is(err, auth.ErrLockOut):
		return newError(http.StatusConflict, CodeConflict, fmt.Sprintf(
			"deleting this entry would lock you out: no other entry admits your address %s; add one first", m.addr))
	case err != nil:
		return err
	}
	s.audit(r, m, changeAllowRemoved, zap.String("tenant_id", e.TenantID), zap.String("service", e.Service),
		zap.String("entry_id", e.ID), zap.String("cidr", e.Prefix.String()))
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type clientJSON struct {
	ClientID     string `json:"client_id"`
	TenantID     string `json:"tenant_id"`
	CreatedAt    string `json:"created_at"`
	ClientSecret string `json:"client_secret,omitempty"` // shown once, at creation
}

func (s *Server) listClients(w http.ResponseWriter, r *http.Request, m manager) error {
	tenant, _, err := s.scope(r, m, r.URL.Query().Get("tenant_id"), "")
	if err != nil {
		return err
	}
	clients, err := s.opts.Identity.Issuer.Clients(r.Context(), tenant)
	if err != nil {
		return err
	}
	items := []clientJSON{}
	for _, c := range clients {
		items = append(items, clientJSON{ClientID: c.ID, TenantID: c.TenantID, CreatedAt: httpDate(c.CreatedAt)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
	return nil
}

func (s *Server) createClient(w http.ResponseWriter, r *http.Request, m manager) error {
	o, err := decodeObject(w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	tenantField := o.optionalString("tenant_id", "")
	if err := o.err(); err != nil {
		return err
	}
	tenant, _, err := s.scope(r, m, tenantField, "")
	if errors.Is(err, errNoTenant404) {
		o.fail("tenant_id", "no such tenant")
		return o.err()
	}
	if err != nil {
		return err
	}
	c, secret, err := s.opts.Identity.Issuer.CreateClient(r.Context(), tenant)
	if err != nil {
		return err
	}
	s.audit(r, m, changeClientCreated, zap.String("tenant_id", tenant), zap.String("client_id", c.ID))
	writeJSON(w, http.StatusCreated, clientJSON{ClientID: c.ID, TenantID: c.TenantID, CreatedAt: httpDate(c.CreatedAt), ClientSecret: secret})
	return nil
}

func (s *Server) revokeClient(w http.ResponseWriter, r *http.Request, m manager) error {
	issuer := s.opts.Identity.Issuer
	c, err := issuer.Client(r.Context(), r.PathValue("id"))
	if err == nil {
		err = issuer.RevokeClient(r.Context(), c.ID)
	}
	if errors.Is(err, auth.ErrNotFound) {
		return newError(http.StatusNotFound, CodeNotFound, "no such OAuth client")
	}
	if err != nil {
		return err
	}
	s.audit(r, m, changeClientRevoked, zap.String("tenant_id", c.TenantID), zap.String("client_id", c.ID))
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type tenantJSON struct {
	ID        string `json:"id"`
	CreatedAt string `json:"created_at"`
}

func (s *Server) listTenants(w http.ResponseWriter, r *http.Request, _ manager) error {
	tenants, err := s.opts.Identity.Admin.Tenants(r.Context())
	if err != nil {
		return err
	}
	items := []tenantJSON{}
	for _, t := range tenants {
		items = append(items, tenantJSON{ID: t.ID, CreatedAt: httpDate(t.CreatedAt)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
	return nil
}

func (s *Server) createTenant(w http.ResponseWriter, r *http.Request, m manager) error {
	o, err := decodeObject(w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	id := o.string("id")
	if err := o.err(); err != nil {
		return err
	}
	if !auth.ValidTenantID(id) {
		o.fail("id", "must be 1 to 63 lower-case letters, digits and hyphens, starting with a letter or digit")
		return o.err()
	}
	t, err := s.opts.Identity.Admin.CreateTenant(r.Context(), id)
	if errors.Is(err, auth.ErrConflict) {
		return newError(http.StatusConflict, CodeConflict, "tenant "+id+" already exists")
	}
	if err != nil {
		return err
	}
	s.audit(r, m, changeTenantCreated, zap.String("tenant_id", t.ID))
	writeJSON(w, http.StatusCreated, tenantJSON{ID: t.ID, CreatedAt: httpDate(t.CreatedAt)})
	return nil
}

type signingKeyJSON struct {
	KID       string `json:"kid"`
	CreatedAt string `json:"created_at"`
	Active    bool   `json:"active"`
}

func (s *Server) listSigningKeys(w http.ResponseWriter, r *http.Request, _ manager) error {
	keys, err := s.opts.Identity.Issuer.Keys().Info(r.Context())
	if err != nil {
		return err
	}
	items := []signingKeyJSON{}
	for _, k := range keys {
		items = append(items, signingKeyJSON{KID: k.KID, CreatedAt: httpDate(k.CreatedAt), Active: k.Active})
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
	return nil
}

func (s *Server) rotateSigningKey(w http.ResponseWriter, r *http.Request, m manager) error {
	k, err := s.opts.Identity.Issuer.Keys().Rotate(r.Context())
	if err != nil {
		return err
	}
	s.audit(r, m, changeSigningKey, zap.String("kid", k.KID))
	writeJSON(w, http.StatusCreated, signingKeyJSON{KID: k.KID, CreatedAt: httpDate(k.CreatedAt), Active: k.Active})
	return nil
}

// checkAdminPassword runs an admin-password check under the failure
// limits of the admin user.
func (s *Server) checkAdminPassword(w http.ResponseWriter, r *http.Request, m manager, field string, f func() error) error {
	return s.limitAuth(w, r, ifaceManagement, "password:"+m.admin.UserID, func() error {
		err := f()
		if errors.Is(err, auth.ErrInvalidCredentials) {
			s.authFailed(ifaceManagement, reasonInvalid)
			return newError(http.StatusUnauthorized, CodeInvalidCredentials, "the "+field+" is wrong")
		}
		return err
	}, isUnauthorized)
}

func (s *Server) changePassword(w http.ResponseWriter, r *http.Request, m manager) error {
	o, err := decodeObject(w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	current, next := o.string("current_password"), o.string("new_password")
	if err := o.err(); err != nil {
		return err
	}
	err = s.checkAdminPassword(w, r, m, "current_password", func() error {
		return s.opts.Identity.Admin.ChangePassword(r.Context(), *m.admin, current, next)
	})
	if errors.Is(err, auth.ErrWeakPassword) {
		return &ValidationError{Fields: []FieldError{{Field: "new_password", Message: "must be 12 to 1024 characters"}}}
	}
	if err != nil {
		return err
	}
	s.audit(r, m, changeAdminPassword)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) rotateAdminToken(w http.ResponseWriter, r *http.Request, m manager) error {
	o, err := decodeObject(w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	password := o.string("password")
	if err := o.err(); err != nil {
		return err
	}
	var token string
	err = s.checkAdminPassword(w, r, m, "password", func() (err error) {
		token, err = s.opts.Identity.Admin.RotateToken(r.Context(), *m.admin, password)
		return err
	})
	if err != nil {
		return err
	}
	s.audit(r, m, changeAdminTokenRotate)
	writeJSON(w, http.StatusCreated, map[string]string{"token": token})
	return nil
}
