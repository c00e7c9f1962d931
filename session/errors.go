package session

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrNotFound is returned when a session or audio settings resource
	// does not exist in the caller's tenant. Stores return it too.
	ErrNotFound = errors.New("session: not found")
	// ErrConflict is returned when a tenant already has a live session for
	// the call id. Stores return it from CreateSession.
	ErrConflict = errors.New("session: a live session already exists for this call_id")
	// ErrNotActive is returned when a session has already reached a
	// terminal state. Stores return it from UpdateSession.
	ErrNotActive = errors.New("session: session is no longer processing audio")
	// ErrClosed is returned by a Manager after Close.
	ErrClosed = errors.New("session: manager closed")
	// ErrUnavailable means the store is failing and the circuit breaker
	// answers for it: retry later.
	ErrUnavailable = errors.New("session: the store is unavailable")
)

// FieldError is one invalid field of a request.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// ValidationError lists every invalid field of a request.
type ValidationError struct {
	Fields []FieldError
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Field + ": " + f.Message
	}
	return "session: invalid request: " + strings.Join(parts, "; ")
}

// add records a field error.
func (e *ValidationError) add(field, format string, args ...any) {
	e.Fields = append(e.Fields, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// err returns e, or nil when no field is invalid.
func (e *ValidationError) err() error {
	if len(e.Fields) == 0 {
		return nil
	}
	return e
}
