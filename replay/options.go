package replay

import (
	"encoding/base64"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/earshot-voice/earshot/audiohook"
)

// timing holds the protocol timings of the client side, as the
// reference client has them (spec section 9). Tests shorten them.
type timing struct {
	open      time.Duration // wait for opened
	close     time.Duration // wait for closed
	firstPing time.Duration // first ping after opened
	ping      time.Duration // ping cadence; a ping unanswered when the next is due fails the call
	dial      time.Duration // the HTTP upgrade
	// abortGrace is how long a call may take to end itself (close,
	// closed) once the run is cancelled, before its socket is dropped.
	abortGrace time.Duration
	poll       time.Duration // between polls of a register session
}

var defaultTiming = timing{open: 5 * time.Second, close: 10 * time.Second, firstPing: time.Second,
	ping: 5 * time.Second, dial: 10 * time.Second, abortGrace: 15 * time.Second, poll: 500 * time.Millisecond}

// Options configure a run. URL, APIKey and Files are required; the zero
// value of every other field works.
type Options struct {
	// URL is the server's AudioHook endpoint, ws:// or wss:// (http://
	// and https:// are taken as ws:// and wss://). A URL with no path gets
	// Earshot's /v1/audiohook.
	URL string
	// APIKey is sent as X-API-KEY on every upgrade, and as the apikey
	// header of the REST calls with Register.
	APIKey string
	// ClientSecret is the AudioHook client secret as Genesys Cloud is
	// given it: base64 of the HMAC key. Empty: upgrades are not signed.
	ClientSecret string
	// OrganizationID is the Audiohook-Organization-Id header and open's
	// organizationId of every call. Default: a random UUID for the run.
	OrganizationID string

	// Files are the recordings, played round-robin: call i plays
	// Files[i % len(Files)]. See LoadRecording for the formats.
	Files []string
	// Channels is the channel count of raw µ-law files (1 or 2). Default 1.
	Channels int

	// CallIDs are the conversation ids of the calls, in order: call i
	// opens with CallIDs[i], so that it feeds the session a client
	// created for that call id. Each must be a UUID (AudioHook's
	// conversationId), at most MaxCallIDs of them. With CallIDs, Calls
	// defaults to len(CallIDs) and may not exceed it. Default: a random
	// UUID per call.
	CallIDs []string

	// Calls is how many calls to make. Default 1, or len(CallIDs).
	Calls int
	// Concurrency bounds the calls in progress at once. Default: Calls.
	Concurrency int
	// Rate bounds how many calls start per second. Default 0: no bound.
	Rate float64
	// Speed paces the audio: 1 is real time, 2 twice as fast. Zero (the
	// default) sends as fast as the socket takes it; frames are then
	// never late.
	Speed float64
	// FrameDuration is the audio in one binary frame. Default 200 ms, as
	// Genesys Cloud and the reference client send.
	FrameDuration time.Duration
	// Duration caps the audio of each call; a longer file is cut. Default
	// 0: the whole file.
	Duration time.Duration
	// Offer is the media list of the open message: OfferGenesys (the
	// default), OfferStereo or OfferMono.
	Offer string

	// Register creates audio settings and a register session for each
	// call through the Earshot REST API before the call opens, and polls
	// the session to a terminal state after it ends. Without it the run
	// uses nothing but the AudioHook protocol and drives any server.
	Register bool
	// RegisterAfterOpen, with Register, creates each call's session once
	// its stream has opened and before its audio, as an agent who starts
	// an enrolment during the call, instead of before the call opens.
	RegisterAfterOpen bool
	// RegisterShare is, with Register, the share of the calls that
	// register (0 < share ≤ 1; 0 means 1). The calls are picked evenly:
	// call i registers when ⌊(i+1)·share⌋ > ⌊i·share⌋, so 0.2 is every
	// fifth call. The others stream with no session, as calls a contact
	// centre does not enrol.
	RegisterShare float64
	// APIURL is the REST base URL. Default: URL's scheme (ws → http,
	// wss → https) and host, with the path before /v1/audiohook.
	APIURL string
	// ModelHash names the speaker model of the sessions. Default: the
	// first model of GET /v1/models.
	ModelHash string
	// AudioTotalDuration is each session's audio_total_duration. Default:
	// the audio the call streams (its file, capped by Duration).
	AudioTotalDuration time.Duration
	// AuthenticityThreshold is each session's authenticity_threshold.
	// Default 0, so that a load test does not fail on voice quality.
	AuthenticityThreshold float64
	// PollTimeout bounds how long after its call a session may stay
	// PROCESSING_AUDIO. Default 60 s.
	PollTimeout time.Duration

	// ServerMetrics is the server's Prometheus endpoint (for Earshot,
	// /metrics on --addr or --metrics-addr). When set, the run reads it
	// before the first call, every 2 s and at the end, and the summary
	// reports the server's CPU per call-second, its memory per call and
	// its dropped frames. Empty: not read.
	ServerMetrics string

	// HTTPClient makes the REST calls. Default: a client of its own whose
	// transport keeps up to Concurrency idle connections. Upgrades always
	// use a transport of their own (HTTP/1.1 only).
	HTTPClient *http.Client
	// Progress receives a live progress report while the run lasts; nil
	// for none. ProgressBar redraws one line about four times a second
	// (for a terminal); otherwise a plain line is written every 5 s.
	Progress    io.Writer
	ProgressBar bool
}

// MaxCallIDs bounds Options.CallIDs.
const MaxCallIDs = 100_000

// resolved are the options with defaults applied and values derived.
type resolved struct {
	Options
	url    string // the AudioHook URL, ws or wss
	apiURL string // the REST base URL, http or https
	secret []byte // decoded ClientSecret, nil for unsigned
}

func (o Options) resolve() (resolved, error) {
	r := resolved{Options: o}
	bad := func(format string, args ...any) (resolved, error) {
		return resolved{}, fmt.Errorf("%w: "+format, append([]any{ErrOptions}, args...)...)
	}
	if len(o.Files) == 0 {
		return resolved{}, ErrNoFiles
	}
	if o.APIKey == "" {
		return bad("an API key is required")
	}
	u, err := hookURL(o.URL)
	if err != nil {
		return bad("url: %v", err)
	}
	r.url = u.String()
	if o.ClientSecret != "" {
		if r.secret, err = base64.StdEncoding.DecodeString(o.ClientSecret); err != nil || len(r.secret) == 0 {
			return bad("the client secret is not base64")
		}
	}
	if r.OrganizationID == "" {
		r.OrganizationID = uuid.NewString()
	} else if !audiohook.ValidUUID(r.OrganizationID) {
		return bad("the organization id %q is not a UUID", r.OrganizationID)
	}
	if r.Channels == 0 {
		r.Channels = 1
	}
	if len(r.CallIDs) > MaxCallIDs {
		return bad("%d call ids, at most %d", len(r.CallIDs), MaxCallIDs)
	}
	for _, id := range r.CallIDs {
		if !audiohook.ValidUUID(id) || id == audiohook.NullUUID {
			return bad("the call id %q is not a UUID (AudioHook conversation ids are)", truncate(id, 64))
		}
	}
	if r.Calls == 0 {
		r.Calls = max(len(r.CallIDs), 1)
	}
	if len(r.CallIDs) > 0 && r.Calls > len(r.CallIDs) {
		return bad("%d calls but %d call ids: each call needs its own", r.Calls, len(r.CallIDs))
	}
	if r.Concurrency == 0 || r.Concurrency > r.Calls {
		r.Concurrency = r.Calls
	}
	if r.FrameDuration == 0 {
		r.FrameDuration = 200 * time.Millisecond
	}
	if r.PollTimeout == 0 {
		r.PollTimeout = 60 * time.Second
	}
	if r.Offer == "" {
		r.Offer = OfferGenesys
	}
	if r.RegisterShare == 0 {
		r.RegisterShare = 1
	}
	switch {
	case r.Channels != 1 && r.Channels != 2:
		return bad("channels must be 1 or 2")
	case r.Calls < 0 || r.Concurrency < 0:
		return bad("calls and concurrency must not be negative")
	case r.Rate < 0 || math.IsNaN(r.Rate) || math.IsInf(r.Rate, 0):
		return bad("rate must be a number ≥ 0")
	case r.Speed < 0 || math.IsNaN(r.Speed) || math.IsInf(r.Speed, 0):
		return bad("speed must be a number ≥ 0")
	case r.FrameDuration < time.Millisecond || r.FrameDuration > 2*time.Second:
		return bad("frame duration must be between 1 ms and 2 s")
	case r.Duration < 0 || r.AudioTotalDuration < 0 || r.PollTimeout < 0:
		return bad("durations must not be negative")
	case r.AuthenticityThreshold < 0 || r.AuthenticityThreshold > 1:
		return bad("authenticity threshold must be in [0, 1]")
	case !(r.RegisterShare > 0 && r.RegisterShare <= 1):
		return bad("register share must be in (0, 1]")
	case r.Offer != OfferGenesys && r.Offer != OfferStereo && r.Offer != OfferMono:
		return bad("offer must be %s, %s or %s", OfferGenesys, OfferStereo, OfferMono)
	}
	if r.ServerMetrics != "" {
		if m, err := url.Parse(r.ServerMetrics); err != nil || (m.Scheme != "http" && m.Scheme != "https") || m.Host == "" {
			return bad("server metrics: %q is not an http:// or https:// URL", r.ServerMetrics)
		}
	}
	if r.Register {
		if r.apiURL, err = restURL(u, o.APIURL); err != nil {
			return bad("api url: %v", err)
		}
	}
	return r, nil
}

// hookURL normalises the AudioHook URL: http(s) becomes ws(s), and an
// empty path becomes /v1/audiohook.
func hookURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "ws", "wss":
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return nil, fmt.Errorf("%q is not a ws:// or wss:// URL", s)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q has no host", s)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/audiohook"
	}
	return u, nil
}

// restURL is the REST base URL: explicit, or derived from the AudioHook
// URL (ws → http, wss → https, the path before /v1/audiohook).
func restURL(hook *url.URL, explicit string) (string, error) {
	if explicit != "" {
		u, err := url.Parse(explicit)
		if err != nil {
			return "", err
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return "", fmt.Errorf("%q is not an http:// or https:// URL", explicit)
		}
		return strings.TrimSuffix(u.String(), "/"), nil
	}
	u := *hook
	u.Scheme = map[string]string{"ws": "http", "wss": "https"}[hook.Scheme]
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1/audiohook")
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	return strings.TrimSuffix(u.String(), "/"), nil
}

// truncate cuts s to at most n bytes, for echoing input in an error.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
