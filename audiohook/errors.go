package audiohook

import "errors"

var (
	// ErrUnauthorized is what an Authenticator returns for an unknown,
	// revoked or otherwise unusable API key.
	ErrUnauthorized = errors.New("audiohook: unauthorized")
	// errSignatureFormat is a structured field that does not parse.
	errSignatureFormat = errors.New("audiohook: malformed structured field")
)

// SignatureError is a failed signature check. Reason is a short, bounded
// word for logs and metrics: missing, malformed, components, parameters,
// algorithm, keyid, nonce, mismatch, future, stale, expired, replay.
type SignatureError struct {
	Reason string
}

func (e *SignatureError) Error() string { return "audiohook: signature " + e.Reason }
