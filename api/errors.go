package api

import (
	"errors"
	"net/http"

	"github.com/earshot-voice/earshot/session"
)

// Error codes of the API. They are part of the contract:
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
	Status  int          `json:"-"`
	Code    string       `json:"code"`
	Message string       `json:"message,omitempty"`
	Errors  []FieldError `json:"errors,omitempty"`
}

// FieldError names one invalid field of a request and what is wrong with
// it, as the errors list of an error response shows it.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// ValidationError is a request whose fields this package found invalid
// (the body's shape, the management interface's inputs, an upload's
// parts); it answers 422 naming each field.
type ValidationError struct {
	Fields []FieldError
}

func (e *ValidationError) Error() string {
	if len(e.Fields) == 0 {
		return "api: invalid request"
	}
	return "api: invalid " + e.Fields[0].Field + ": " + e.Fields[0].Message
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
	var verr *ValidationError
	var sverr *session.ValidationError
	switch {
	case errors.As(err, &apiErr):
		return apiErr
	case errors.As(err, &verr):
		return &Error{Status: http.StatusUnprocessableEntity, Code: CodeValidationFailed,
			Message: "the request has invalid fields", Errors: verr.Fields}
	case errors.As(err, &sverr):
		// The session's own checks: settings, a session's fields, a
		// recording or credential it cannot use.
		fields := make([]FieldError, len(sverr.Fields))
		for i, f := range sverr.Fields {
			fields[i] = FieldError{Field: f.Field, Message: f.Message}
		}
		return &Error{Status: http.StatusUnprocessableEntity, Code: CodeValidationFailed,
			Message: "the request has invalid fields", Errors: fields}
	case errors.Is(err, session.ErrNotFound):
		return errNotFound
	case errors.Is(err, session.ErrConflict):
		return newError(http.StatusConflict, CodeConflict, "a session for this call_id is already processing audio")
	case errors.Is(err, session.ErrNotActive):
		return newError(http.StatusConflict, CodeConflict, "the session has already ended")
	case errors.Is(err, session.ErrClosed):
		return newError(http.StatusServiceUnavailable, CodeUnavailable, "the server is shutting down")
	case errors.Is(err, session.ErrUnavailable):
		// The store's circuit breaker is open: fail fast.
		return newError(http.StatusServiceUnavailable, CodeUnavailable, "the store is unavailable; retry shortly")
	}
	return errInternal
}
