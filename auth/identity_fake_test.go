package auth

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// idStore is an in-memory AdminStore, KeyAdminStore, AllowListStore,
// OAuthStore and SigningKeyStore.
type idStore struct {
	mu      sync.Mutex
	tenants map[string]Tenant
	users   map[string]User
	tokens  map[string]AdminToken // by lookup
	keys    map[string]APIKey     // by id
	allow   []AllowEntry
	clients map[string]OAuthClient
	refresh map[string]RefreshToken // by lookup
	sealed  map[string]SealedSecret
	fail    error // returned by every method when set
}

func newIDStore() *idStore {
	return &idStore{tenants: map[string]Tenant{}, users: map[string]User{}, tokens: map[string]AdminToken{},
		keys: map[string]APIKey{}, clients: map[string]OAuthClient{}, refresh: map[string]RefreshToken{},
		sealed: map[string]SealedSecret{}}
}

func (s *idStore) lock() func() {
	s.mu.Lock()
	return s.mu.Unlock
}

func (s *idStore) AdminTokenByLookup(_ context.Context, lookup string) (AdminToken, error) {
	defer s.lock()()
	if s.fail != nil {
		return AdminToken{}, s.fail
	}
	t, ok := s.tokens[lookup]
	if !ok {
		return AdminToken{}, ErrNotFound
	}
	return t, nil
}

func (s *idStore) User(_ context.Context, id string) (User, error) {
	defer s.lock()()
	u, ok := s.users[id]
	if !ok {
		return User{}, ErrNotFound
	}
	return u, nil
}

func (s *idStore) SetPasswordHash(_ context.Context, userID, hash string) error {
	defer s.lock()()
	u, ok := s.users[userID]
	if !ok {
		return ErrNotFound
	}
	u.PasswordHash = hash
	s.users[userID] = u
	return nil
}

func (s *idStore) ReplaceAdminToken(_ context.Context, t AdminToken, _ time.Time) error {
	defer s.lock()()
	for k, old := range s.tokens {
		if old.UserID == t.UserID {
			old.Revoked = true
			s.tokens[k] = old
		}
	}
	s.tokens[t.Lookup] = t
	return nil
}

func (s *idStore) Tenant(_ context.Context, id string) (Tenant, error) {
	defer s.lock()()
	t, ok := s.tenants[id]
	if !ok {
		return Tenant{}, ErrNotFound
	}
	return t, nil
}

func (s *idStore) Tenants(context.Context) ([]Tenant, error) {
	defer s.lock()()
	var out []Tenant
	for _, t := range s.tenants {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Tenant) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func (s *idStore) AddTenant(_ context.Context, t Tenant) error {
	defer s.lock()()
	if _, ok := s.tenants[t.ID]; ok {
		return ErrConflict
	}
	s.tenants[t.ID] = t
	return nil
}

func (s *idStore) APIKeys(_ context.Context, tenantID string) ([]APIKey, error) {
	defer s.lock()()
	var out []APIKey
	for _, k := range s.keys {
		if k.TenantID == tenantID && !k.Revoked {
			out = append(out, k)
		}
	}
	return out, nil
}

func (s *idStore) APIKeyByID(_ context.Context, id string) (APIKey, error) {
	defer s.lock()()
	k, ok := s.keys[id]
	if !ok {
		return APIKey{}, ErrNotFound
	}
	return k, nil
}

func (s *idStore) RevokeAPIKey(_ context.Context, id string, _ time.Time) error {
	defer s.lock()()
	k, ok := s.keys[id]
	if !ok || k.Revoked {
		return ErrNotFound
	}
	k.Revoked = true
	s.keys[id] = k
	return nil
}

func (s *idStore) AllowList(_ context.Context, tenantID string) ([]AllowEntry, error) {
	defer s.lock()()
	var out []AllowEntry
	for _, e := range s.allow {
		if e.TenantID == tenantID {
			out = append(out, e)
		}
	}
	return out, nil
}

func (s *idStore) CreateAllowEntry(_ context.Context, e AllowEntry) error {
	defer s.lock()()
	for _, x := range s.allow {
		if x.TenantID == e.TenantID && x.Service == e.Service && x.Prefix == e.Prefix {
			return ErrConflict
		}
	}
	s.allow = append(s.allow, e)
	return nil
}

func (s *idStore) DeleteAllowEntry(_ context.Context, id string, guard func(AllowEntry, []AllowEntry) error) (AllowEntry, error) {
	defer s.lock()()
	i := slices.IndexFunc(s.allow, func(e AllowEntry) bool { return e.ID == id })
	if i < 0 {
		return AllowEntry{}, ErrNotFound
	}
	e := s.allow[i]
	var others []AllowEntry
	for _, x := range s.allow {
		if x.TenantID == e.TenantID && x.ID != id {
			others = append(others, x)
		}
	}
	if err := guard(e, others); err != nil {
		return AllowEntry{}, err
	}
	s.allow = slices.Delete(s.allow, i, i+1)
	return e, nil
}

func (s *idStore) OAuthClient(_ context.Context, id string) (OAuthClient, error) {
	defer s.lock()()
	if s.fail != nil {
		return OAuthClient{}, s.fail
	}
	c, ok := s.clients[id]
	if !ok {
		return OAuthClient{}, ErrNotFound
	}
	return c, nil
}

func (s *idStore) OAuthClients(_ context.Context, tenantID string) ([]OAuthClient, error) {
	defer s.lock()()
	var out []OAuthClient
	for _, c := range s.clients {
		if c.TenantID == tenantID && !c.Revoked {
			out = append(out, c)
		}
	}
	return out, nil
}

func (s *idStore) CreateOAuthClient(_ context.Context, c OAuthClient) error {
	defer s.lock()()
	s.clients[c.ID] = c
	return nil
}

func (s *idStore) RevokeOAuthClient(_ context.Context, id string, _ time.Time) error {
	defer s.lock()()
	c, ok := s.clients[id]
	if !ok || c.Revoked {
		return ErrNotFound
	}
	c.Revoked = true
	s.clients[id] = c
	for k, r := range s.refresh {
		if r.ClientID == id {
			r.Revoked = true
			s.refresh[k] = r
		}
	}
	return nil
}

func (s *idStore) CreateRefreshToken(_ context.Context, t RefreshToken) error {
	defer s.lock()()
	s.refresh[t.Lookup] = t
	return nil
}

func (s *idStore) RefreshTokenByLookup(_ context.Context, lookup string) (RefreshToken, error) {
	defer s.lock()()
	t, ok := s.refresh[lookup]
	if !ok {
		return RefreshToken{}, ErrNotFound
	}
	return t, nil
}

func (s *idStore) RotateRefreshToken(_ context.Context, usedID string, _ time.Time, next RefreshToken) error {
	defer s.lock()()
	for k, r := range s.refresh {
		if r.ID == usedID {
			if r.Used || r.Revoked {
				return ErrConflict
			}
			r.Used = true
			s.refresh[k] = r
			s.refresh[next.Lookup] = next
			return nil
		}
	}
	return ErrConflict
}

func (s *idStore) RevokeRefreshFamily(_ context.Context, familyID string, _ time.Time) error {
	defer s.lock()()
	for k, r := range s.refresh {
		if r.FamilyID == familyID {
			r.Revoked = true
			s.refresh[k] = r
		}
	}
	return nil
}

func (s *idStore) RefreshFamilyRevoked(_ context.Context, familyID string) (bool, error) {
	defer s.lock()()
	for _, r := range s.refresh {
		if r.FamilyID == familyID && r.Revoked {
			return true, nil
		}
	}
	return false, nil
}

func (s *idStore) DeleteExpiredRefreshTokens(_ context.Context, before time.Time) (int64, error) {
	defer s.lock()()
	var n int64
	for k, r := range s.refresh {
		if r.ExpiresAt.Before(before) {
			delete(s.refresh, k)
			n++
		}
	}
	return n, nil
}

func (s *idStore) SealedSecrets(_ context.Context, prefix string) ([]SealedSecret, error) {
	defer s.lock()()
	if s.fail != nil {
		return nil, s.fail
	}
	var out []SealedSecret
	for name, v := range s.sealed {
		if strings.HasPrefix(name, prefix) {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b SealedSecret) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (s *idStore) CreateSealedSecret(_ context.Context, v SealedSecret) error {
	defer s.lock()()
	if _, ok := s.sealed[v.Name]; ok {
		return ErrConflict
	}
	s.sealed[v.Name] = v
	return nil
}

func (s *idStore) DeleteSealedSecret(_ context.Context, name string) error {
	defer s.lock()()
	delete(s.sealed, name)
	return nil
}

// clock is a settable test clock, safe for concurrent use.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
