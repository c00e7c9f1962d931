package voiceprint

import "errors"

// Sentinel errors. Opening a credential fails with exactly one of the
// ErrCredential… errors, so that a caller can tell the client what is wrong
// with the credential it sent.
var (
	// ErrModelFormat: model file bytes are not a model definition this
	// package can read.
	ErrModelFormat = errors.New("voiceprint: malformed model definition")
	// ErrDim: a feature vector does not have the model's dimension.
	ErrDim = errors.New("voiceprint: feature vector has the wrong dimension")
	// ErrNonFinite: a feature vector holds a NaN or an infinity; it was
	// skipped.
	ErrNonFinite = errors.New("voiceprint: feature vector not finite")
	// ErrNotEnoughVoice: the collection holds less voice than the model's
	// MinVoiceSeconds.
	ErrNotEnoughVoice = errors.New("voiceprint: not enough voice")
	// ErrKey: the sealing key is not 32 bytes, or the AEAD is not one with
	// 12-byte nonces.
	ErrKey = errors.New("voiceprint: sealing key must be 32 bytes (AES-256-GCM)")
	// ErrTenant: the tenant id is empty or longer than 255 bytes.
	ErrTenant = errors.New("voiceprint: tenant id must be 1..255 bytes")
	// ErrCredentialMalformed: the credential is not base64url, or is too
	// short to hold a header, a nonce and a tag.
	ErrCredentialMalformed = errors.New("voiceprint: malformed credential")
	// ErrCredentialVersion: the credential was sealed by a format version
	// this build does not know.
	ErrCredentialVersion = errors.New("voiceprint: unknown credential version")
	// ErrCredentialTenant: the credential belongs to another tenant.
	ErrCredentialTenant = errors.New("voiceprint: credential belongs to another tenant")
	// ErrCredentialModel: the credential was made with another model than
	// the one asked for, or with a model this build does not ship.
	ErrCredentialModel = errors.New("voiceprint: credential made with another model")
	// ErrCredentialTampered: the credential's authentication failed: it was
	// altered or truncated, or sealed with another key.
	ErrCredentialTampered = errors.New("voiceprint: credential failed authentication")
)
