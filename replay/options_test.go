package replay

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/earshot-voice/earshot/audiohook"
)

func TestURLs(t *testing.T) {
	tests := []struct {
		in, explicitAPI string
		wantHook        string
		wantAPI         string
		wantErr         string
	}{
		{in: "ws://127.0.0.1:8080", wantHook: "ws://127.0.0.1:8080/v1/audiohook", wantAPI: "http://127.0.0.1:8080"},
		{in: "ws://h:8080/v1/audiohook", wantHook: "ws://h:8080/v1/audiohook", wantAPI: "http://h:8080"},
		{in: "wss://edge.example.com/", wantHook: "wss://edge.example.com/v1/audiohook", wantAPI: "https://edge.example.com"},
		{in: "https://edge.example.com/earshot/v1/audiohook", wantHook: "wss://edge.example.com/earshot/v1/audiohook", wantAPI: "https://edge.example.com/earshot"},
		{in: "http://h/api/v1/audiohook/ws?x=1", wantHook: "ws://h/api/v1/audiohook/ws?x=1", wantAPI: "http://h/api/v1/audiohook/ws"},
		{in: "ws://h", explicitAPI: "https://api.example.com/", wantHook: "ws://h/v1/audiohook", wantAPI: "https://api.example.com"},
		{in: "ftp://h", wantErr: "not a ws"},
		{in: "ws:///path", wantErr: "no host"},
		{in: "ws://h", explicitAPI: "ws://h", wantErr: "not an http"},
	}
	for _, tt := range tests {
		t.Run(tt.in+" "+tt.explicitAPI, func(t *testing.T) {
			u, err := hookURL(tt.in)
			var api string
			if err == nil {
				api, err = restURL(u, tt.explicitAPI)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || u.String() != tt.wantHook || api != tt.wantAPI {
				t.Fatalf("got %v %q %v; want %q %q", u, api, err, tt.wantHook, tt.wantAPI)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	base := func() Options {
		return Options{URL: "ws://h", APIKey: "k", Files: []string{"a.wav"}}
	}
	tests := []struct {
		name    string
		edit    func(*Options)
		check   func(t *testing.T, r resolved)
		wantErr string
	}{
		{name: "defaults", check: func(t *testing.T, r resolved) {
			if r.Calls != 1 || r.Concurrency != 1 || r.Channels != 1 || r.FrameDuration != 200*time.Millisecond ||
				r.Speed != 0 || r.secret != nil || !audiohook.ValidUUID(r.OrganizationID) || r.PollTimeout != time.Minute ||
				r.Offer != OfferGenesys {
				t.Errorf("%+v", r)
			}
		}},
		{name: "concurrency defaults to calls", edit: func(o *Options) { o.Calls = 50 }, check: func(t *testing.T, r resolved) {
			if r.Concurrency != 50 {
				t.Errorf("concurrency %d", r.Concurrency)
			}
		}},
		{name: "concurrency above calls", edit: func(o *Options) { o.Calls, o.Concurrency = 3, 10 }, check: func(t *testing.T, r resolved) {
			if r.Concurrency != 3 {
				t.Errorf("concurrency %d", r.Concurrency)
			}
		}},
		{name: "secret decoded", edit: func(o *Options) { o.ClientSecret = "aGVsbG8=" }, check: func(t *testing.T, r resolved) {
			if string(r.secret) != "hello" {
				t.Errorf("secret %q", r.secret)
			}
		}},
		{name: "register derives the api url", edit: func(o *Options) { o.Register = true }, check: func(t *testing.T, r resolved) {
			if r.apiURL != "http://h" {
				t.Errorf("api url %q", r.apiURL)
			}
		}},
		{name: "call ids set the calls", edit: func(o *Options) {
			o.CallIDs = []string{"0b5f6e3a-6c1d-4f27-9a3e-2d4c8b1e7f01", "0b5f6e3a-6c1d-4f27-9a3e-2d4c8b1e7f02"}
		}, check: func(t *testing.T, r resolved) {
			if r.Calls != 2 || r.Concurrency != 2 {
				t.Errorf("calls %d, concurrency %d", r.Calls, r.Concurrency)
			}
		}},
		{name: "fewer calls than call ids", edit: func(o *Options) {
			o.Calls, o.CallIDs = 1, []string{"0b5f6e3a-6c1d-4f27-9a3e-2d4c8b1e7f01", "0b5f6e3a-6c1d-4f27-9a3e-2d4c8b1e7f02"}
		}, check: func(t *testing.T, r resolved) {
			if r.Calls != 1 {
				t.Errorf("calls %d", r.Calls)
			}
		}},
		{name: "more calls than call ids", edit: func(o *Options) {
			o.Calls, o.CallIDs = 3, []string{"0b5f6e3a-6c1d-4f27-9a3e-2d4c8b1e7f01"}
		}, wantErr: "call ids"},
		{name: "call id not a uuid", edit: func(o *Options) { o.CallIDs = []string{"call-0001"} }, wantErr: "UUID"},
		{name: "null call id", edit: func(o *Options) { o.CallIDs = []string{audiohook.NullUUID} }, wantErr: "UUID"},
		{name: "no files", edit: func(o *Options) { o.Files = nil }, wantErr: "no files"},
		{name: "no key", edit: func(o *Options) { o.APIKey = "" }, wantErr: "API key"},
		{name: "secret not base64", edit: func(o *Options) { o.ClientSecret = "not base64!" }, wantErr: "base64"},
		{name: "org id not a uuid", edit: func(o *Options) { o.OrganizationID = "acme" }, wantErr: "UUID"},
		{name: "three channels", edit: func(o *Options) { o.Channels = 3 }, wantErr: "channels"},
		{name: "negative speed", edit: func(o *Options) { o.Speed = -1 }, wantErr: "speed"},
		{name: "negative rate", edit: func(o *Options) { o.Rate = -1 }, wantErr: "rate"},
		{name: "tiny frames", edit: func(o *Options) { o.FrameDuration = time.Microsecond }, wantErr: "frame"},
		{name: "threshold above 1", edit: func(o *Options) { o.AuthenticityThreshold = 2 }, wantErr: "threshold"},
		{name: "bad url", edit: func(o *Options) { o.URL = "h:8080" }, wantErr: "url"},
		{name: "register share above 1", edit: func(o *Options) { o.Register, o.RegisterShare = true, 1.5 }, wantErr: "register share"},
		{name: "negative register share", edit: func(o *Options) { o.RegisterShare = -0.2 }, wantErr: "register share"},
		{name: "unknown offer", edit: func(o *Options) { o.Offer = "quad" }, wantErr: "offer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base()
			if tt.edit != nil {
				tt.edit(&o)
			}
			r, err := o.resolve()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if !errors.Is(err, ErrOptions) && !errors.Is(err, ErrNoFiles) {
					t.Errorf("%v is not ErrOptions", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, r)
		})
	}
}
