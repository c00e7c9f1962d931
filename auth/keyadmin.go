package auth

import (
	"context"
	"time"
)

// KeyAdmin lists and revokes API keys for the management interface; Keys
// issues them. It is safe for concurrent use.
type KeyAdmin struct {
	store KeyAdminStore
	now   func() time.Time
}

// NewKeyAdmin returns a KeyAdmin over store.
func NewKeyAdmin(store KeyAdminStore) *KeyAdmin {
	return &KeyAdmin{store: store, now: time.Now}
}

// List returns a tenant's active keys, oldest first.
func (k *KeyAdmin) List(ctx context.Context, tenantID string) ([]APIKey, error) {
	return k.store.APIKeys(ctx, tenantID)
}

// Get returns an active key by id, or ErrNotFound (also for a revoked
// key: to the management interface a revoked key no longer exists).
func (k *KeyAdmin) Get(ctx context.Context, id string) (APIKey, error) {
	rec, err := k.store.APIKeyByID(ctx, id)
	if err == nil && rec.Revoked {
		return APIKey{}, ErrNotFound
	}
	return rec, err
}

// Revoke revokes an active key. Keys.Authenticate refuses it from the
// next request on: nothing caches keys. ErrNotFound if there is no such
// active key.
func (k *KeyAdmin) Revoke(ctx context.Context, id string) error {
	return k.store.RevokeAPIKey(ctx, id, k.now().UTC().Truncate(time.Millisecond))
}
