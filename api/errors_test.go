package api

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/earshot-voice/earshot/session"
)

func TestToError(t *testing.T) {
	tests := []struct {
		err        error
		wantStatus int
		wantCode   string
	}{
		{session.ErrNotFound, http.StatusNotFound, CodeNotFound},
		{fmt.Errorf("get: %w", session.ErrConflict), http.StatusConflict, CodeConflict},
		{session.ErrNotActive, http.StatusConflict, CodeConflict},
		{session.ErrClosed, http.StatusServiceUnavailable, CodeUnavailable},
		{fmt.Errorf("store: %w", session.ErrUnavailable), http.StatusServiceUnavailable, CodeUnavailable},
		{&session.ValidationError{}, http.StatusUnprocessableEntity, CodeValidationFailed},
		{&ValidationError{Fields: []FieldError{{Field: "cidr", Message: "must be an address or prefix"}}}, http.StatusUnprocessableEntity, CodeValidationFailed},
		{errors.New("disk on fire"), http.StatusInternalServerError, CodeInternal},
	}
	for _, tt := range tests {
		if got := toError(tt.err); got.Status != tt.wantStatus || got.Code != tt.wantCode {
			t.Errorf("toError(%v) = %d %s, want %d %s", tt.err, got.Status, got.Code, tt.wantStatus, tt.wantCode)
		}
	}
	// A session's field errors reach the response as the API's own.
	got := toError(fmt.Errorf("create: %w", &session.ValidationError{Fields: []session.FieldError{{Field: "call_id", Message: "is required"}}}))
	if len(got.Errors) != 1 || got.Errors[0] != (FieldError{Field: "call_id", Message: "is required"}) {
		t.Errorf("session field errors became %+v", got.Errors)
	}
}
