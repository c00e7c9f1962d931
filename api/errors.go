package api

import (
	"errors"
	"net/http"

	"github.com/earshot-voice/earshot/session"
)

// Error codes of the API (DESIGN.md 2.5). They are part of the contract:
// new ones may be added, none renamed.
const (
	CodeInvalidCredentials   = "InvalidCredentials"
	CodeNotFound             = "NotFound"
	CodeValidationFailed     = "ValidationFailed"
	CodeConflict             = "Conflict"
	CodeUnsupportedMediaType = "UnsupportedMediaType"
	CodePayloadTooLarge      = "PayloadTooLarge"
	CodeHeadersTooLarge      = "HeadersTooLarge"
	CodeMethodNotAllowed     = "MethodNotAllowed"
	CodeRateLimited          = "RateLimited"
	CodeIPNotAllowed         = "IPNotAllowed"
	CodeForbidden            = "Forbidden"
	CodeUnavailable          = "Unavailable"
	CodeInternal             = "Internal"
)

// Error is an API error response.
type Error struct {
	Status  int                  `json:"-"`
	Code    string               `json:"code"`
	Message string               `json:"message,omitempty"`
	Errors  []session.FieldError `json:"errors,omitempty"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func newError(status int, code, msg string) *Error {
	return &Error{Status: status, Code: code, Message: msg}
}

// errInvalidJSONBody and friends are the request-shape errors.
var (
	errNotFound  = newError(http.StatusNotFound, CodeNotFound, "no such resource")
	errNoAPIKey  = newError(http.StatusUnauthorized, CodeInvalidCredentials, "the apikey header is missing")
	errBadAPIKey = newError(http.StatusUnauthorized, CodeInvalidCredentials, "the credentials are invalid")
	errInternal  = newError(http.StatusInternalServerError, CodeInternal, "internal error; quote the X-Request-Id when reporting it")
)

// toError maps errors of the packages below to API errors. Unknown errors
// become 500 Internal (and are logged by the caller).
func toError(err error) *Error {
	var apiErr *Error
	var verr *session.ValidationError
	switch {
	case errors.As(err, &apiErr):
		return apiErr
	case errors.As(err, &verr):
		return &Error{Status: http.StatusUnprocessableEntity, Code: CodeValidationFailed,
			Message: "the request has invalid fields", Errors: verr.Fields}
	case errors.Is(err, session.ErrNotFound):
		return errNotFound
	case errors.Is(err, session.ErrConflict):
		return newError(http.StatusConflict, CodeConflict, "a session for this call_id is already processing audio")
	case errors.Is(err, session.ErrNotActive):
		return newError(http.StatusConflict, CodeConflict, "the session has already ended")
	case errors.Is(err, session.ErrClosed):
		return newError(http.StatusServiceUnavailable, CodeUnavailable, "the server is shutting down")
	case errors.Is(err, session.ErrUnavailable):
		// The store's circuit breaker is open (DESIGN.md 5): fail fast.
		return newError(http.StatusServiceUnavailable, CodeUnavailable, "the store is unavailable; retry shortly")
	}
	return errInternal
}
