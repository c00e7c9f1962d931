package auth

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/google/uuid"
)

// ParsePrefix parses an allow-list entry: a CIDR prefix, or a single
// address that stands for itself (/32 or /128). It returns the prefix in
// canonical form: host bits cleared, an IPv4-mapped IPv6 prefix of /96 or
// longer written as IPv4, IPv6 in RFC 5952 form. Zones are refused: an
// allow list names networks, not interfaces.
func ParsePrefix(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 || strings.Contains(s, "%") {
		return netip.Prefix{}, ErrBadPrefix
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		a, aerr := netip.ParseAddr(s)
		if aerr != nil {
			return netip.Prefix{}, ErrBadPrefix
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// Covers reports whether one of entries admits addr. With service not
// empty only that service's entries count.
func Covers(entries []AllowEntry, service string, addr netip.Addr) bool {
	if !addr.IsValid() {
		return false
	}
	addr = addr.Unmap()
	for _, e := range entries {
		if (service == "" || e.Service == service) && e.Prefix.Contains(addr) {
			return true
		}
	}
	return false
}

// AllowList reads and changes the IP allow lists of tenants' services. It
// is safe for concurrent use.
type AllowList struct {
	store AllowListStore
	now   func() time.Time
}

// NewAllowList returns an AllowList over store.
func NewAllowList(store AllowListStore) *AllowList {
	return &AllowList{store: store, now: time.Now}
}

// Entries returns every entry of a tenant, of every service.
func (a *AllowList) Entries(ctx context.Context, tenantID string) ([]AllowEntry, error) {
	return a.store.AllowList(ctx, tenantID)
}

// Add admits prefix to a tenant's service. It returns ErrConflict when the
// service already has that prefix.
func (a *AllowList) Add(ctx context.Context, tenantID, service string, prefix netip.Prefix) (AllowEntry, error) {
	e := AllowEntry{ID: uuid.NewString(), TenantID: tenantID, Service: service, Prefix: prefix.Masked(),
		CreatedAt: a.now().UTC().Truncate(time.Millisecond)}
	if err := a.store.CreateAllowEntry(ctx, e); err != nil {
		if errors.Is(err, ErrConflict) {
			return AllowEntry{}, err
		}
		return AllowEntry{}, fmt.Errorf("auth: storing allow-list entry: %w", err)
	}
	return e, nil
}

// Remove deletes the entry with that id if may, given the entry and the
// other entries of its tenant, returns nil (see AllowListStore for why the
// check and the delete are one transaction). Callers express both their
// authorisation and the lock-out rule in may; LockOutGuard builds the
// latter.
func (a *AllowList) Remove(ctx context.Context, id string, may func(entry AllowEntry, others []AllowEntry) error) (AllowEntry, error) {
	return a.store.DeleteAllowEntry(ctx, id, may)
}

// LockOutGuard returns ErrLockOut when the caller at addr, admitted today
// by the entries of service (every service when service is empty) of its
// own tenant, would no longer be admitted once entry is gone. others are
// the tenant's remaining entries. Entries of another tenant never lock the
// caller out.
func LockOutGuard(callerTenant, service string, addr netip.Addr, entry AllowEntry, others []AllowEntry) error {
	if entry.TenantID != callerTenant || (service != "" && entry.Service != service) {
		return nil
	}
	if Covers([]AllowEntry{entry}, service, addr) && !Covers(others, service, addr) {
		return ErrLockOut
	}
	return nil
}
