package api

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
)

// FuzzDecodeObject feeds JSON request bodies to the decoder every JSON
// endpoint uses, and reads fields of every kind from what it accepts:
// errors are API errors or field errors, never panics.
func FuzzDecodeObject(f *testing.F) {
	f.Add([]byte(`{"audio_protocol":"audiohook","sample_rate":8000,"channels":1,"channel":null}`))
	f.Add([]byte(`{"a":1e999,"b":"x","c":1.5}`))
	f.Add([]byte(`{"a":1} {"b":2}`))
	f.Add([]byte(`[1,2]`))
	f.Add([]byte(`{"a":"\ud800"}`))
	f.Add(bytes.Repeat([]byte(`{"a":`), 200))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest("POST", "/v1/audio_settings", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		o, err := decodeObject(httptest.NewRecorder(), r, 4<<10)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Status < 400 || e.Status >= 500 {
				t.Fatalf("decode error %v is not a client error", err)
			}
			return
		}
		if o.raw == nil {
			t.Fatal("accepted a body that is not an object")
		}
		o.string("a")
		o.optionalString("b", "")
		o.number("c")
		o.optionalNumber("d")
		o.integer("e")
		var verr *ValidationError
		if err := o.err(); err != nil && (!errors.As(err, &verr) || len(verr.Fields) == 0) {
			t.Fatalf("field errors %v", err)
		}
	})
}

// FuzzRequestID: whatever a client sends as X-Request-Id, the id used
// (and logged) is safe: the client's own only when it is short and plain.
func FuzzRequestID(f *testing.F) {
	for _, s := range []string{"abc-123", "", "a\nb", "x\x00", string(bytes.Repeat([]byte("a"), 65)), "trace:1.2_3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, client string) {
		id := requestID(client)
		if id == client {
			if !validRequestID.MatchString(id) {
				t.Fatalf("unsafe client id %q kept", id)
			}
			return
		}
		if _, err := uuid.Parse(id); err != nil {
			t.Fatalf("replacement id %q is not a UUID", id)
		}
	})
}

// FuzzHeaderBytes: the API's header limit counts at least every byte of
// the headers' names and values.
func FuzzHeaderBytes(f *testing.F) {
	f.Add("X-A", "b", "/v1/models?x=1")
	f.Add("", "", "/")
	f.Fuzz(func(t *testing.T, name, value, target string) {
		r, err := http.NewRequest("GET", "http://h"+target, nil)
		if err != nil {
			return
		}
		r.RequestURI = target
		r.Header[name] = []string{value}
		if n := headerBytes(r); n < len(name)+len(value)+len(target) {
			t.Fatalf("headerBytes = %d for a %d-byte header and a %d-byte target", n, len(name)+len(value), len(target))
		}
	})
}
