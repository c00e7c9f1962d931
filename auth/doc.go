// Package auth holds Earshot's credentials: API keys, the admin user and its
// token, OAuth clients, the IP allow list, the master key that seals the
// secrets that must stay usable, and the first-start bootstrap.
//
// It implements the authentication rules of the voice API and of the
// management interface (docs/AUTH.md):
//
//   - Every secret Earshot hands out is a high-entropy random string (32 random
//     bytes). At rest it is kept only as an HMAC-SHA256 digest under a key
//     derived from the master key, so a copy of the database alone cannot even
//     test a guess. Lookups go by a short public identifier embedded in the
//     secret and end in a constant-time comparison of digests.
//   - The admin password, the one secret a person may choose, is hashed with
//     Argon2id.
//   - Secrets that must be usable later (the AudioHook HMAC client secret, the
//     JWT signing key) are sealed with AES-256-GCM under another key derived
//     from the master key, with the owning record's identity as associated
//     data.
//
// Persistence goes through the Store interface declared here; package store
// implements it.
package auth
