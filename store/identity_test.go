package store_test

import (
	"errors"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/earshot-voice/earshot/auth"
	"github.com/earshot-voice/earshot/store"
)

func TestIdentityRecords(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func() *store.Store) {
		s, ctx := open(), t.Context()
		recs := initialRecords()
		if err := s.Initialise(ctx, recs); err != nil {
			t.Fatal(err)
		}

		// Tenants.
		if err := s.AddTenant(ctx, auth.Tenant{ID: "acme", CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddTenant(ctx, auth.Tenant{ID: "acme", CreatedAt: t0}); !errors.Is(err, auth.ErrConflict) {
			t.Fatalf("duplicate tenant = %v, want ErrConflict", err)
		}
		if got, err := s.Tenant(ctx, "acme"); err != nil || !got.CreatedAt.Equal(t0) {
			t.Fatalf("Tenant = %+v, %v", got, err)
		}
		if _, err := s.Tenant(ctx, "nope"); !errors.Is(err, auth.ErrNotFound) {
			t.Fatalf("unknown tenant = %v", err)
		}
		if list, err := s.Tenants(ctx); err != nil || len(list) != 2 || list[0].ID != "acme" || list[1].ID != "default" {
			t.Fatalf("Tenants = %+v, %v", list, err)
		}

		// Admin user and tokens.
		tok, err := s.AdminTokenByLookup(ctx, "tok")
		if err != nil || tok.UserID != "u1" || tok.Revoked {
			t.Fatalf("AdminTokenByLookup = %+v, %v", tok, err)
		}
		if _, err := s.AdminTokenByLookup(ctx, "nope"); !errors.Is(err, auth.ErrNotFound) {
			t.Fatalf("unknown admin token = %v", err)
		}
		next := auth.AdminToken{ID: "t2", UserID: "u1", TenantID: "default", Lookup: "tok2", Digest: []byte{7}, CreatedAt: t0}
		if err := s.ReplaceAdminToken(ctx, next, t0.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if old, _ := s.AdminTokenByLookup(ctx, "tok"); !old.Revoked {
			t.Fatal("ReplaceAdminToken left the old token active")
		}
		if got, _ := s.AdminTokenByLookup(ctx, "tok2"); got.Revoked || got.ID != "t2" {
			t.Fatalf("new admin token = %+v", got)
		}
		if err := s.SetPasswordHash(ctx, "u1", "$argon2id$new"); err != nil {
			t.Fatal(err)
		}
		if u, err := s.User(ctx, "u1"); err != nil || u.PasswordHash != "$argon2id$new" || u.Name != "admin" {
			t.Fatalf("User = %+v, %v", u, err)
		}
		if err := s.SetPasswordHash(ctx, "nobody", "x"); !errors.Is(err, auth.ErrNotFound) {
			t.Fatalf("SetPasswordHash of nobody = %v", err)
		}
		if _, err := s.User(ctx, "nobody"); !errors.Is(err, auth.ErrNotFound) {
			t.Fatalf("User(nobody) = %v", err)
		}

		// API keys.
		k2 := auth.APIKey{ID: "k2", TenantID: "default", Service: "other", Role: "user", Name: "n", Lookup: "lk2", Digest: []byte{5}, CreatedAt: t0.Add(time.Second)}
		if err := s.CreateAPIKey(ctx, k2); err != nil {
			t.Fatal(err)
		}
		if list, err := s.APIKeys(ctx, "default"); err != nil || len(list) != 2 || list[0].ID != "k1" || list[1].ID != "k2" {
			t.Fatalf("APIKeys = %+v, %v", list, err)
		}
		if err := s.RevokeAPIKey(ctx, "k2", t0); err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeAPIKey(ctx, "k2", t0); !errors.Is(err, auth.ErrNotFound) {
			t.Fatalf("second revoke = %v", err)
		}
		if got, err := s.APIKeyByID(ctx, "k2"); err != nil || !got.Revoked || got.Service != "other" {
			t.Fatalf("APIKeyByID = %+v, %v", got, err)
		}
		if got, _ := s.APIKeyByLookup(ctx, "lk2"); !got.Revoked {
			t.Fatal("revoked key authenticates by lookup as active")
		}
		if list, _ := s.APIKeys(ctx, "default"); len(list) != 1 {
			t.Fatalf("APIKeys after revoke = %+v", list)
		}
		if _, err := s.APIKeyByID(ctx, "nope"); !errors.Is(err, auth.ErrNotFound) {
			t.Fatalf("unknown key = %v", err)
		}

		// Allow list.
		v6 := auth.AllowEntry{ID: "a2", TenantID: "default", Service: "streaming", Prefix: netip.MustParsePrefix("2001:db8::/32"), CreatedAt: t0.Add(time.Second)}
		if err := s.CreateAllowEntry(ctx, v6); err != nil {
			t.Fatal(err)
		}
		dup := v6
		dup.ID = "a3"
		if err := s.CreateAllowEntry(ctx, dup); !errors.Is(err, auth.ErrConflict) {
			t.Fatalf("duplicate entry = %v", err)
		}
		list, err := s.AllowList(ctx, "default")
		if err != nil || len(list) != 2 || list[0].ID != "a1" || list[1].Prefix != v6.Prefix || !list[1].CreatedAt.Equal(v6.CreatedAt) {
			t.Fatalf("AllowList = %+v, %v", list, err)
		}
		refuse := errors.New("refused")
		_, err = s.DeleteAllowEntry(ctx, "a1", func(e auth.AllowEntry, others []auth.AllowEntry) error {
			if e.ID != "a1" || len(others) != 1 || others[0].ID != "a2" {
				t.Errorf("guard saw %+v and %+v", e, others)
			}
			return refuse
		})
		if !errors.Is(err, refuse) {
			t.Fatalf("guarded delete = %v", err)
		}
		if list, _ := s.AllowList(ctx, "default"); len(list) != 2 {
			t.Fatal("a refused delete deleted")
		}
		if got, err := s.DeleteAllowEntry(ctx, "a1", func(auth.AllowEntry, []auth.AllowEntry) error { return nil }); err != nil || got.ID != "a1" {
			t.Fatalf("delete = %+v, %v", got, err)
		}
		if _, err := s.DeleteAllowEntry(ctx, "a1", func(auth.AllowEntry, []auth.AllowEntry) error { return nil }); !errors.Is(err, auth.ErrNotFound) {
			t.Fatalf("delete of a deleted entry = %v", err)
		}

		// OAuth clients and refresh tokens.
		c2 := auth.OAuthClient{ID: "c2", TenantID: "default", Digest: []byte{8}, CreatedAt: t0.Add(time.Second)}
		if err := s.CreateOAuthClient(ctx, c2); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateOAuthClient(ctx, c2); !errors.Is(err, auth.ErrConflict) {
			t.Fatalf("duplicate client = %v", err)
		}
		if list, err := s.OAuthClients(ctx, "default"); err != nil || len(list) != 2 {
			t.Fatalf("OAuthClients = %+v, %v", list, err)
		}
		rt := func(id, lookup, family string, expires time.Time) auth.RefreshToken {
			return auth.RefreshToken{ID: id, TenantID: "default", ClientID: "c2", FamilyID: family, Lookup: lookup,
				Digest: []byte(id), Scope: "roles", CreatedAt: t0, ExpiresAt: expires, FamilyExpiresAt: t0.Add(time.Hour)}
		}
		r1 := rt("r1", "l1", "f1", t0.Add(30*time.Minute))
		if err := s.CreateRefreshToken(ctx, r1); err != nil {
			t.Fatal(err)
		}
		got, err := s.RefreshTokenByLookup(ctx, "l1")
		if err != nil || got.ClientID != "c2" || got.Used || got.Revoked || !got.ExpiresAt.Equal(r1.ExpiresAt) ||
			!got.FamilyExpiresAt.Equal(r1.FamilyExpiresAt) || string(got.Digest) != "r1" || got.Scope != "roles" {
			t.Fatalf("RefreshTokenByLookup = %+v, %v", got, err)
		}
		if err := s.RotateRefreshToken(ctx, "r1", t0, rt("r2", "l2", "f1", t0.Add(40*time.Minute))); err != nil {
			t.Fatal(err)
		}
		if err := s.RotateRefreshToken(ctx, "r1", t0, rt("r3", "l3", "f1", t0.Add(40*time.Minute))); !errors.Is(err, auth.ErrConflict) {
			t.Fatalf("second use = %v, want ErrConflict", err)
		}
		if _, err := s.RefreshTokenByLookup(ctx, "l3"); !errors.Is(err, auth.ErrNotFound) {
			t.Fatal("a refused rotation stored its next token")
		}
		if got, _ := s.RefreshTokenByLookup(ctx, "l1"); !got.Used {
			t.Fatal("rotation did not mark the token used")
		}
		if revoked, err := s.RefreshFamilyRevoked(ctx, "f1"); err != nil || revoked {
			t.Fatalf("RefreshFamilyRevoked before the revocation = %v, %v", revoked, err)
		}
		if err := s.RevokeRefreshFamily(ctx, "f1", t0); err != nil {
			t.Fatal(err)
		}
		for family, want := range map[string]bool{"f1": true, "unknown": false} {
			if revoked, err := s.RefreshFamilyRevoked(ctx, family); err != nil || revoked != want {
				t.Fatalf("RefreshFamilyRevoked(%s) = %v, %v; want %v", family, revoked, err, want)
			}
		}
		if got, _ := s.RefreshTokenByLookup(ctx, "l2"); !got.Revoked {
			t.Fatal("family revocation missed a token")
		}
		if err := s.RotateRefreshToken(ctx, "r2", t0, rt("r4", "l4", "f1", t0)); !errors.Is(err, auth.ErrConflict) {
			t.Fatalf("rotation of a revoked token = %v", err)
		}
		if err := s.CreateRefreshToken(ctx, rt("r5", "l5", "f2", t0.Add(time.Minute))); err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeOAuthClient(ctx, "c2", t0); err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeOAuthClient(ctx, "c2", t0); !errors.Is(err, auth.ErrNotFound) {
			t.Fatalf("second client revoke = %v", err)
		}
		if got, _ := s.RefreshTokenByLookup(ctx, "l5"); !got.Revoked {
			t.Fatal("client revocation left a refresh token active")
		}
		if c, err := s.OAuthClient(ctx, "c2"); err != nil || !c.Revoked {
			t.Fatalf("revoked client = %+v, %v", c, err)
		}
		if _, err := s.OAuthClient(ctx, "nope"); !errors.Is(err, auth.ErrNotFound) {
			t.Fatalf("unknown client = %v", err)
		}
		if list, _ := s.OAuthClients(ctx, "default"); len(list) != 1 || list[0].ID != "c1" {
			t.Fatalf("OAuthClients after revoke = %+v", list)
		}
		n, err := s.DeleteExpiredRefreshTokens(ctx, t0.Add(35*time.Minute))
		if err != nil || n != 2 { // r1 and r5
			t.Fatalf("DeleteExpiredRefreshTokens = %d, %v", n, err)
		}

		// Sealed secrets, by prefix; LIKE wildcards in the prefix are literal.
		for _, name := range []string{"jwt-signing-key/000000000002", "jwt-signing-key/000000000001", "jwt_x", "other"} {
			if err := s.CreateSealedSecret(ctx, auth.SealedSecret{Name: name, Value: []byte(name), CreatedAt: t0}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.CreateSealedSecret(ctx, auth.SealedSecret{Name: "other", Value: []byte{1}, CreatedAt: t0}); !errors.Is(err, auth.ErrConflict) {
			t.Fatalf("duplicate sealed secret = %v", err)
		}
		got2, err := s.SealedSecrets(ctx, "jwt-signing-key/")
		if err != nil || len(got2) != 2 || got2[0].Name != "jwt-signing-key/000000000001" || string(got2[1].Value) != "jwt-signing-key/000000000002" {
			t.Fatalf("SealedSecrets = %+v, %v", got2, err)
		}
		if got, _ := s.SealedSecrets(ctx, "jwt_"); len(got) != 1 || got[0].Name != "jwt_x" {
			t.Fatalf("SealedSecrets(jwt_) = %+v", got)
		}
		if err := s.DeleteSealedSecret(ctx, "jwt-signing-key/000000000001"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteSealedSecret(ctx, "missing"); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.SealedSecrets(ctx, "jwt-signing-key/"); len(got) != 1 {
			t.Fatalf("after delete: %+v", got)
		}
	})
}

// TestAllowListDeleteIsSerialised deletes the two entries that admit a
// caller at once, each guarded by "another entry still admits me": one
// delete must see the other's result and refuse.
func TestAllowListDeleteIsSerialised(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func() *store.Store) {
		s, ctx := open(), t.Context()
		if err := s.Initialise(ctx, initialRecords()); err != nil {
			t.Fatal(err)
		}
		second := auth.AllowEntry{ID: "a2", TenantID: "default", Service: "streaming", Prefix: netip.MustParsePrefix("127.0.0.1/32"), CreatedAt: t0}
		if err := s.CreateAllowEntry(ctx, second); err != nil {
			t.Fatal(err)
		}
		caller := netip.MustParseAddr("127.0.0.1")
		guard := func(e auth.AllowEntry, others []auth.AllowEntry) error {
			return auth.LockOutGuard("default", "streaming", caller, e, others)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, id := range []string{"a1", "a2"} {
			wg.Go(func() { _, errs[i] = s.DeleteAllowEntry(ctx, id, guard) })
		}
		wg.Wait()
		locked := 0
		for _, err := range errs {
			switch {
			case errors.Is(err, auth.ErrLockOut):
				locked++
			case err != nil:
				t.Fatalf("delete: %v", err)
			}
		}
		list, _ := s.AllowList(ctx, "default")
		if locked != 1 || len(list) != 1 {
			t.Fatalf("%d deletes refused, %d entries left; want 1 and 1", locked, len(list))
		}
	})
}
