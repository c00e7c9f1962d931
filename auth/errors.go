package auth

import "errors"

var (
	// ErrNotFound is returned by a Store when a record does not exist.
	ErrNotFound = errors.New("auth: not found")
	// ErrAlreadyInitialised is returned by Store.Bootstrap when the store
	// already holds a tenant.
	ErrAlreadyInitialised = errors.New("auth: store already initialised")
	// ErrInvalidCredentials means a presented credential is missing,
	// malformed, unknown or revoked. Callers must not tell these apart to
	// the client.
	ErrInvalidCredentials = errors.New("auth: invalid credentials")
	// ErrMasterKeyMismatch means the store was initialised with another
	// master key: nothing sealed in it can be opened.
	ErrMasterKeyMismatch = errors.New("auth: master key does not match the store")
	// ErrBadMasterKey means a configured master key is not 32 bytes in
	// base64 or hex.
	ErrBadMasterKey = errors.New("auth: master key must be 32 bytes, base64 or hex encoded")
	// ErrConflict is returned by a Store when a record with the same
	// unique name or value already exists, or when a single-use record
	// (a refresh token) has already been used.
	ErrConflict = errors.New("auth: conflict")
	// ErrTokenExpired means a correctly signed access token is past its
	// expiry (beyond the allowed clock skew).
	ErrTokenExpired = errors.New("auth: access token expired")
	// ErrWrongTenant means a correctly signed access token was issued for
	// another tenant than the one the request names.
	ErrWrongTenant = errors.New("auth: access token belongs to another tenant")
	// ErrLockOut means a change would leave the caller unable to reach the
	// management interface.
	ErrLockOut = errors.New("auth: the change would lock the caller out")
	// ErrWeakPassword means a new admin password is too short or too long.
	ErrWeakPassword = errors.New("auth: the password must be 12 to 1024 characters")
	// ErrBadPrefix means an allow-list entry is not an IPv4 or IPv6
	// address or CIDR prefix.
	ErrBadPrefix = errors.New("auth: not an IPv4 or IPv6 address or CIDR prefix (e.g. 203.0.113.0/24, 2001:db8::/48)")
	// errSealed means a sealed value failed to open: wrong key, wrong
	// associated data, or tampering.
	errSealed = errors.New("auth: sealed value cannot be opened")
)
