package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/earshot-voice/earshot/auth"
	"github.com/earshot-voice/earshot/session"
)

// Authenticator resolves an API key to its principal; *auth.Keys
// implements it. It returns auth.ErrInvalidCredentials for any bad key.
type Authenticator interface {
	Authenticate(ctx context.Context, apiKey string) (auth.Principal, error)
}

// Observer records answered requests; *metrics.Metrics implements it.
type Observer interface {
	ObserveRequest(route, method string, code int, elapsed time.Duration)
}

// Options configure a Server. Sessions and Keys are required; the zero
// value of every other field works.
type Options struct {
	Sessions *session.Manager
	Keys     Authenticator
	// Ready reports whether the server's dependencies answer; /ready
	// answers 503 while it returns an error. Nil means always ready.
	Ready func(context.Context) error
	// Metrics, if not nil, is served at GET /metrics.
	Metrics http.Handler
	// Observer, if not nil, records every request.
	Observer Observer
	// MaxBodyBytes limits JSON request bodies. Default 64 KiB.
	MaxBodyBytes int64
	// Logger receives request and error logs. Default: no logs.
	Logger *zap.Logger
	// AudioHook, if not nil, serves the AudioHook WebSocket endpoint
	// GET /v1/audiohook (it authenticates its own upgrades).
	AudioHook http.Handler
	// Identity, if not nil, serves the OAuth identity provider, the
	// tenant-scoped interface and the management interface.
	Identity *Identity
	// Singles scores POST /api/public/singles; while it is nil that
	// endpoint validates its input and answers 503.
	Singles SingleScorer
	// MaxUploadBytes limits multipart uploads. Default 32 MiB.
	MaxUploadBytes int64
	// Security, if not nil, counts token requests, authentication
	// failures and management changes.
	Security SecurityObserver
	// RequestReadTimeout bounds the reading of a request body, counted
	// from the moment its handler starts (the HTTP server's
	// ReadHeaderTimeout bounds the headers): a body that has not arrived
	// whole by then fails to read, the request is answered and its
	// connection closed. The multipart upload extends it as its bytes
	// arrive (MinUploadRate); the AudioHook upgrade lifts it, since the
	// HTTP server clears a connection's deadlines when it hands it over,
	// and the AudioHook handler's idle watchdog bounds the call from
	// then on. Default 15 s.
	RequestReadTimeout time.Duration
	// MaxHeaderBytes limits the size of a request's line and headers
	// (431 HeadersTooLarge beyond it). The HTTP server's own limit must be
	// larger, or it answers first, in plain text. Default 32 KiB.
	MaxHeaderBytes int
	// MinUploadRate is the slowest average rate, in bytes per second, at
	// which a multipart upload is read: each byte read moves the
	// request's read deadline 1/MinUploadRate later. Default 32 KiB/s.
	MinUploadRate int64
}

// DefaultMaxBodyBytes is the default limit of JSON request bodies.
const DefaultMaxBodyBytes = 64 << 10

// Defaults of Options.RequestReadTimeout, Options.MinUploadRate and
// Options.MaxHeaderBytes.
const (
	DefaultRequestReadTimeout = 15 * time.Second
	DefaultMinUploadRate      = 32 << 10
	DefaultMaxHeaderBytes     = 32 << 10
)

// Server is Earshot's HTTP handler. It is safe for concurrent use.
type Server struct {
	opts     Options
	log      *zap.Logger
	mux      *http.ServeMux
	draining atomic.Bool
}

// New returns a Server with every route registered.
func New(opts Options) *Server {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.RequestReadTimeout <= 0 {
		opts.RequestReadTimeout = DefaultRequestReadTimeout
	}
	if opts.MinUploadRate <= 0 {
		opts.MinUploadRate = DefaultMinUploadRate
	}
	if opts.MaxHeaderBytes <= 0 {
		opts.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	s := &Server{opts: opts, log: opts.Logger, mux: http.NewServeMux()}
	s.routes()
	return s
}

func (s *Server) routes() {
	s.mux.HandleFunc("GET /alive", alive)
	s.mux.HandleFunc("GET /v1/alive", alive)
	s.mux.HandleFunc("GET /ready", s.ready)
	if s.opts.Metrics != nil {
		s.mux.Handle("GET /metrics", s.opts.Metrics)
	}
	s.mux.Handle("GET /v1/models", s.streaming(s.listModels))
	s.mux.Handle("POST /v1/audio_settings", s.streaming(s.createAudioSettings))
	s.mux.Handle("GET /v1/audio_settings/{id}", s.streaming(s.getAudioSettings))
	s.mux.Handle("POST /v1/register_session", s.streaming(s.createSession(session.KindRegister)))
	s.mux.Handle("GET /v1/register_session/{id}", s.streaming(s.getSession(session.KindRegister)))
	s.mux.Handle("DELETE /v1/register_session/{id}", s.streaming(s.cancelSession(session.KindRegister)))
	s.identityRoutes()
	s.mux.Handle("POST /v1/verify_session", s.streaming(s.createSession(session.KindVerify)))
	s.mux.Handle("GET /v1/verify_session/{id}", s.streaming(s.getSession(session.KindVerify)))
	s.mux.Handle("DELETE /v1/verify_session/{id}", s.streaming(s.cancelSession(session.KindVerify)))
	if s.opts.AudioHook != nil {
		s.mux.Handle(audioHookRoute, s.opts.AudioHook)
	}
}

// audioHookRoute is the AudioHook WebSocket endpoint. Its requests last
// as long as a call, so they are left out of the request metrics; the
// audiohook package measures them.
const audioHookRoute = "GET /v1/audiohook"

// SetDraining makes /ready answer 503 so that load balancers stop sending
// new work while the process shuts down.
func (s *Server) SetDraining() { s.draining.Store(true) }

// ServeHTTP implements http.Handler: request id, recovery, metrics and
// logging around the routes, and JSON answers for unknown routes and
// methods.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := requestID(r.Header.Get("X-Request-Id"))
	w.Header().Set("X-Request-Id", id)
	rw := &responseWriter{ResponseWriter: w, http1: r.ProtoMajor == 1}
	if r.Body != nil && r.Body != http.NoBody {
		rw.body = newRequestBody(w, r.Body, start.Add(s.opts.RequestReadTimeout))
		if rw.body != nil {
			r.Body = rw.body
		}
	}
	_, route := s.mux.Handler(r)
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.Error("handler panic", zap.String("request_id", id), zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
			if rw.status == 0 {
				writeError(rw, errInternal)
			}
		}
		if route == "" {
			route = "unmatched"
		}
		if s.opts.Observer != nil && route != audioHookRoute {
			s.opts.Observer.ObserveRequest(routeLabel(route), methodLabel(r.Method), rw.code(), time.Since(start))
		}
		if ce := s.log.Check(zap.DebugLevel, "request"); ce != nil {
			ce.Write(zap.String("request_id", id), zap.String("method", r.Method), zap.String("route", route),
				zap.Int("status", rw.code()), zap.Duration("elapsed", time.Since(start)))
		}
	}()
	if n := headerBytes(r); n > s.opts.MaxHeaderBytes {
		writeError(rw, newError(http.StatusRequestHeaderFieldsTooLarge, CodeHeadersTooLarge,
			fmt.Sprintf("the request line and headers are larger than %d bytes", s.opts.MaxHeaderBytes)))
		return
	}
	if route == "" {
		s.unmatched(rw, r)
		return
	}
	s.mux.ServeHTTP(rw, r.WithContext(withRequestID(r.Context(), id)))
}

// unmatched answers a request no route matches: 405 with Allow when the
// path exists under another method, else 404.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request) {
	probe := &headerRecorder{header: http.Header{}}
	s.mux.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", probe.header.Get("Allow"))
		writeError(w, newError(http.StatusMethodNotAllowed, CodeMethodNotAllowed,
			fmt.Sprintf("method %s is not allowed here; allowed: %s", r.Method, probe.header.Get("Allow"))))
		return
	}
	writeError(w, newError(http.StatusNotFound, CodeNotFound, "no such endpoint"))
}

// headerBytes is about the size of r's request line and headers as they
// were sent.
func headerBytes(r *http.Request) int {
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4 + len("Host: \r\n") + len(r.Host)
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4 // ": " and CRLF
		}
	}
	return n
}

// routeLabel drops the method from a ServeMux pattern: "GET /v1/x/{id}"
// becomes "/v1/x/{id}".
func routeLabel(pattern string) string {
	if _, path, ok := strings.Cut(pattern, " "); ok {
		return path
	}
	return pattern
}

// methodLabel bounds the method label: clients may send any token.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

func alive(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeError(w, newError(http.StatusServiceUnavailable, CodeUnavailable, "the server is shutting down"))
		return
	}
	if s.opts.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.opts.Ready(ctx); err != nil {
			s.log.Warn("not ready", zap.Error(err))
			writeError(w, newError(http.StatusServiceUnavailable, CodeUnavailable, "the store is not reachable"))
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// handlerFunc is a handler of an authenticated request that returns its
// error instead of writing it.
type handlerFunc func(w http.ResponseWriter, r *http.Request, p auth.Principal) error

// streaming authenticates the apikey header of the streaming interface
// (spec 5.1) and writes the handler's error.
func (s *Server) streaming(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.authenticateStreaming(w, r)
		if err == nil {
			err = h(w, r, p)
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	})
}

func (s *Server) authenticate(r *http.Request) (auth.Principal, error) {
	key := r.Header.Get("apikey")
	if key == "" {
		return auth.Principal{}, errNoAPIKey
	}
	p, err := s.opts.Keys.Authenticate(r.Context(), key)
	switch {
	case errors.Is(err, auth.ErrInvalidCredentials):
		return auth.Principal{}, errBadAPIKey
	case err != nil:
		return auth.Principal{}, err
	case p.Service != auth.ServiceStreaming:
		return auth.Principal{}, newError(http.StatusForbidden, CodeForbidden,
			fmt.Sprintf("this API key belongs to service %q, not %q", p.Service, auth.ServiceStreaming))
	}
	return p, nil
}

// writeError answers with err's API form, logging errors that are not the
// client's fault.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := toError(err)
	if e.Status >= 500 {
		s.log.Error("request failed", zap.String("request_id", requestIDFrom(r.Context())),
			zap.String("route", r.Pattern), zap.Error(err))
	}
	writeError(w, e)
}

func writeError(w http.ResponseWriter, e *Error) {
	writeJSON(w, e.Status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"code":"Internal","message":"response encoding failed"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(body, '\n')) //nolint:errcheck // the client has gone
}

// validRequestID admits client-chosen request ids that are safe to log.
var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// requestID returns the client's X-Request-Id when it is safe, else a new
// UUID.
func requestID(client string) string {
	if client != "" && validRequestID.MatchString(client) {
		return client
	}
	return uuid.NewString()
}

type requestIDKey struct{}

func withRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

func requestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// responseWriter records the status written. Unwrap lets
// http.ResponseController reach the connection (WebSocket upgrades).
type responseWriter struct {
	http.ResponseWriter
	status int
	body   *requestBody // nil for a request without a body
	http1  bool         // an HTTP/1 request: its connection carries nothing else
}

// WriteHeader writes the status. An error answer sent before the body
// has been read to its end stops waiting for the rest of the body and,
// over HTTP/1, closes the connection: the server would otherwise read
// (and wait for) up to 256 KiB of it after the handler returns, before it
// even sends the answer, to keep the connection. (HTTP/2 takes a
// Connection header as a request to close every stream of the
// connection, and needs no draining: only the stream stops.)
func (w *responseWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		if code >= 400 && w.body != nil && !w.body.eof {
			if w.http1 {
				w.Header().Set("Connection", "close")
			}
			w.body.stop()
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *responseWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// headerRecorder captures the status and headers ServeMux writes for an
// unmatched request, discarding its plain-text body.
type headerRecorder struct {
	header http.Header
	status int
}

func (h *headerRecorder) Header() http.Header         { return h.header }
func (h *headerRecorder) WriteHeader(code int)        { h.status = code }
func (h *headerRecorder) Write(b []byte) (int, error) { return len(b), nil }
