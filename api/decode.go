package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
)

// object is a decoded JSON request object whose fields are read one by
// one, so that every bad field is reported, not only the first.
type object struct {
	raw    map[string]json.RawMessage
	fields []FieldError
}

// decodeObject reads a JSON object body of at most limit bytes. The body
// must be declared application/json (spec 4.5.6).
func decodeObject(w http.ResponseWriter, r *http.Request, limit int64) (*object, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, newError(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType,
			"the request body must be JSON with Content-Type: application/json")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, newError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge,
			fmt.Sprintf("the request body is larger than %d bytes", limit))
	case err != nil:
		return nil, newError(http.StatusBadRequest, CodeValidationFailed, "the request body could not be read")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var raw map[string]json.RawMessage
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return nil, newError(http.StatusBadRequest, CodeValidationFailed, "the request body must be one JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, newError(http.StatusBadRequest, CodeValidationFailed, "the request body must hold one JSON object and nothing after it")
	}
	return &object{raw: raw}, nil
}

func (o *object) fail(field, msg string) {
	o.fields = append(o.fields, FieldError{Field: field, Message: msg})
}

// present returns a field's raw value, recording "is required" when it is
// absent or null.
func (o *object) present(field string) (json.RawMessage, bool) {
	v, ok := o.raw[field]
	if !ok || string(v) == "null" {
		o.fail(field, "is required")
		return nil, false
	}
	return v, true
}

// string reads a required string field.
func (o *object) string(field string) string {
	v, ok := o.present(field)
	if !ok {
		return ""
	}
	return o.stringValue(field, v)
}

// optionalString reads a string field that may be absent or null.
func (o *object) optionalString(field, def string) string {
	v, ok := o.raw[field]
	if !ok || string(v) == "null" {
		return def
	}
	return o.stringValue(field, v)
}

func (o *object) stringValue(field string, v json.RawMessage) string {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		o.fail(field, "must be a string")
	}
	return s
}

// number reads a required finite number field.
func (o *object) number(field string) float64 {
	v, ok := o.present(field)
	if !ok {
		return 0
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil || math.IsInf(f, 0) {
		o.fail(field, "must be a number")
	}
	return f
}

// optionalNumber reads a finite number field that may be absent or null.
func (o *object) optionalNumber(field string) *float64 {
	v, ok := o.raw[field]
	if !ok || string(v) == "null" {
		return nil
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil || math.IsInf(f, 0) {
		o.fail(field, "must be a number")
		return nil
	}
	return &f
}

// integer reads a required integral number field.
func (o *object) integer(field string) int {
	v, ok := o.present(field)
	if !ok {
		return 0
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<31 {
		o.fail(field, "must be an integer")
		return 0
	}
	return int(f)
}

// err returns the recorded field errors as a 422 response, or nil.
func (o *object) err() error {
	if len(o.fields) == 0 {
		return nil
	}
	return &ValidationError{Fields: o.fields}
}
