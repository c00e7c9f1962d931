package audiohook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"
)

// Authenticator resolves the X-API-KEY of an upgrade to its tenant and the
// key's client secret (base64-decoded, as Genesys signs with it). A nil
// secret means the key has none and the upgrade needs no signature. An
// unknown or unusable key returns ErrUnauthorized.
type Authenticator interface {
	AuthenticateAudioHook(ctx context.Context, apiKey string) (tenantID string, secret []byte, err error)
}

// StreamInfo describes an opened stream to its consumer.
type StreamInfo struct {
	TenantID       string
	SessionID      string // the AudioHook session id (Audiohook-Session-Id)
	CorrelationID  string
	OrganizationID string
	ConversationID string // the call id
	Participant    Participant
	Language       string
	// Media is the selected media; its Format is empty when none matched.
	Media Media
}

// Consumer is what a stream's audio goes to; package session implements it
// (through a small adapter in cmd/earshot).
type Consumer interface {
	// SelectMedia picks the offered media to ask for, or -1 for none. It
	// runs before opened is sent and must return at once (no I/O).
	SelectMedia(tenantID, conversationID string, offered []Media) int
	// StartStream is called right after opened is sent, for every stream
	// but a connection probe. The returned Stream's Run is started on its
	// own goroutine and waited for before the connection ends.
	StartStream(ctx context.Context, info StreamInfo, ctl Control) (Stream, error)
}

// Stream consumes the audio of one call. Audio, Discarded, Pause and End
// are called from the connection's reader goroutine and must not block;
// End may also be called during shutdown from another goroutine, and more
// than once.
type Stream interface {
	// Run processes the stream until End was called and the work is done,
	// or ctx is cancelled.
	Run(ctx context.Context)
	// Audio hands over one binary frame of whole samples of every channel,
	// in the selected media's format. The stream copies what it keeps.
	Audio(frame []byte)
	// Discarded reports audio the client skipped (discarded, resumed).
	Discarded(d time.Duration)
	// Pause reports the client's pause state.
	Pause(paused bool)
	// End says no more audio will come, with a reason: a close reason
	// (end, error, disconnect, reconnect), "socket" for a lost connection,
	// "violation", or "shutdown".
	End(reason string)
}

// Control lets a stream end its connection. Its methods are safe for
// concurrent use.
type Control interface {
	// Disconnect sends disconnect with a reason (completed, error) unless
	// the connection is already closing; the client then closes.
	Disconnect(reason, info string)
}

// Observer is told what connections do; package metrics implements it.
// Every string is from a small fixed set. Methods must not block.
type Observer interface {
	AudioHookStarted()
	AudioHookOpened(latency time.Duration, probe bool)
	AudioHookEnded(reason string)
	AudioHookFrame(bytes int)
	AudioHookPong()
	AudioHookViolation(kind string)
	AudioHookAuthFailed(reason string)
}

// Limiter bounds failed authentications of upgrades with the limits of
// the service's other interfaces; package api implements it (through a
// small adapter in cmd/earshot). Its methods are called concurrently and
// must not block.
type Limiter interface {
	// Wait returns how long the client of r (its address, and the API key
	// it presents) must wait before its next upgrade is heard: zero while
	// it has failures left.
	Wait(r *http.Request) time.Duration
	// Fail charges one failed authentication to the client of r.
	Fail(r *http.Request)
}

// Options configure a Handler. Authenticator and Consumer are required;
// the zero value of every other field works.
type Options struct {
	Authenticator Authenticator
	Consumer      Consumer
	Observer      Observer
	Logger        *zap.Logger
	// MaxSignatureAge and ClockSkew bound signature freshness. Defaults
	// 10 s and 3 s.
	MaxSignatureAge, ClockSkew time.Duration
	// AuthFailureDelay is the least time between an upgrade and the
	// answer to a failed authentication. Default 500 ms.
	AuthFailureDelay time.Duration
	// FinaliseTimeout bounds the wait for a stream's finalisation before
	// closed is sent (the client gives up after 10 s). Default 8 s.
	FinaliseTimeout time.Duration
	// CloseTimeout bounds the wait for the client to close the socket
	// after closed or a disconnect. Default 10 s.
	CloseTimeout time.Duration
	// IdleTimeout drops a connection that sends nothing for this long
	// (Genesys pings every few seconds). Default 60 s.
	IdleTimeout time.Duration
	// Now is the clock of signature checks and of the failure log.
	// Default time.Now.
	Now func() time.Time
	// Limiter, if not nil, refuses upgrades of clients with too many
	// failed authentications (429 before upgrading) and is charged each
	// failure. Default: no limit.
	Limiter Limiter
}

// noncesPerTenant bounds the live signature nonces of one tenant: at the
// longest signature life (MaxSignatureAge plus ClockSkew, 13 s), about
// 1,200 upgrades a second.
const noncesPerTenant = 1 << 14

// authFailureLogInterval is the least time between two log lines about
// failed upgrades; the failures in between are counted in the next line
// (and each in earshot_audiohook_auth_failures_total).
const authFailureLogInterval = 10 * time.Second

// Handler serves the AudioHook WebSocket endpoint. It is safe for
// concurrent use. ServeHTTP returns once the connection is upgraded (or
// refused) and serves the call on a goroutine of its own; Shutdown drains
// every call and waits for those goroutines.
type Handler struct {
	opts    Options
	log     *zap.Logger
	nonces  *nonceCache
	failLog failureLog

	ctx    context.Context // parent of every connection's context
	cancel context.CancelFunc

	mu       sync.Mutex
	draining bool
	conns    map[*conn]struct{}
	wg       sync.WaitGroup
}

// NewHandler returns a Handler.
func NewHandler(opts Options) *Handler {
	if opts.MaxSignatureAge <= 0 {
		opts.MaxSignatureAge = 10 * time.Second
	}
	if opts.ClockSkew <= 0 {
		opts.ClockSkew = 3 * time.Second
	}
	if opts.AuthFailureDelay <= 0 {
		opts.AuthFailureDelay = 500 * time.Millisecond
	}
	if opts.FinaliseTimeout <= 0 {
		opts.FinaliseTimeout = 8 * time.Second
	}
	if opts.CloseTimeout <= 0 {
		opts.CloseTimeout = 10 * time.Second
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 60 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Observer == nil {
		opts.Observer = nopObserver{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Handler{opts: opts, log: opts.Logger, nonces: newNonceCache(noncesPerTenant),
		ctx: ctx, cancel: cancel, conns: map[*conn]struct{}{}}
}

// ServeHTTP upgrades an AudioHook connection and returns; a goroutine of
// the connection's own serves it until it ends, and Shutdown waits for it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sessionID := r.Header.Get("Audiohook-Session-Id")
	if !ValidUUID(sessionID) || sessionID == NullUUID {
		writeError(w, http.StatusBadRequest, "ValidationFailed", "Audiohook-Session-Id must be a UUID")
		return
	}
	if h.opts.Limiter != nil {
		if wait := h.opts.Limiter.Wait(r); wait > 0 {
			h.opts.Observer.AudioHookAuthFailed("rate-limited")
			secs := int(math.Ceil(wait.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeError(w, http.StatusTooManyRequests, "RateLimited",
				fmt.Sprintf("too many failed authentication attempts; retry after %d seconds", secs))
			return
		}
	}
	c := &conn{h: h, sessionID: sessionID, log: h.log.With(zap.String("audiohook_session_id", sessionID)),
		orgID: r.Header.Get("Audiohook-Organization-Id"), correlationID: r.Header.Get("Audiohook-Correlation-Id")}
	if !h.track(c) {
		writeError(w, http.StatusServiceUnavailable, "Unavailable", "the server is shutting down")
		return
	}
	tenantID, authErr := h.authenticate(r)
	if authErr != nil && h.opts.Limiter != nil && reasonOf(authErr) != "internal" {
		h.opts.Limiter.Fail(r)
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		h.untrack(c)
		c.log.Debug("upgrade failed", zap.Error(err))
		return
	}
	ws.SetReadLimit(MaxMessageSize)
	c.mu.Lock()
	c.ws, c.tenantID = ws, tenantID
	c.mu.Unlock()
	// The connection is hijacked: serve it on a goroutine of its own and
	// let this one end. The HTTP server's goroutine has grown its stack
	// through the upgrade (header parsing, the signature check, the key's
	// lookup in the store), and a goroutine's stack only shrinks at a
	// garbage collection, which a busy server with a steady heap seldom
	// runs: thousands of calls kept those stacks for their whole length.
	go func() {
		defer h.untrack(c)
		ctx, cancel := context.WithCancel(h.ctx) // not r.Context(): a call outlives nothing but the server
		defer cancel()
		if authErr != nil {
			h.opts.Observer.AudioHookAuthFailed(reasonOf(authErr))
			h.failLog.record(c.log, h.opts.Now(), reasonOf(authErr))
			c.sleepUntil(ctx, start.Add(h.opts.AuthFailureDelay))
			c.unauthorized(ctx)
		}
		c.serve(ctx, start)
	}()
}

// authenticate checks the API key and, when the key has a client secret,
// the signature. Failures are *SignatureError or ErrUnauthorized.
func (h *Handler) authenticate(r *http.Request) (string, error) {
	key := r.Header.Get("X-Api-Key")
	if key == "" || len(key) > 256 {
		return "", &SignatureError{Reason: "missing-key"}
	}
	tenantID, secret, err := h.opts.Authenticator.AuthenticateAudioHook(r.Context(), key)
	if err != nil {
		dummyHMAC(r)
		if errors.Is(err, ErrUnauthorized) {
			return "", &SignatureError{Reason: "unknown-key"}
		}
		h.log.Error("authenticating AudioHook key", zap.Error(err))
		return "", &SignatureError{Reason: "internal"}
	}
	if secret == nil {
		return tenantID, nil
	}
	now := h.opts.Now()
	signed, err := verifySignature(r, secret, now, freshness{maxAge: h.opts.MaxSignatureAge, skew: h.opts.ClockSkew})
	if err != nil {
		return "", err
	}
	if !h.nonces.add(tenantID, signed.nonce, signed.expires, now) {
		return "", &SignatureError{Reason: "replay"}
	}
	return tenantID, nil
}

// writeError answers a refused upgrade in the service's JSON error form.
func writeError(w http.ResponseWriter, status int, code, message string) {
	body, _ := json.Marshal(struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{code, message})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(body, '\n')) //nolint:errcheck // the client has gone
}

// failureLog keeps failed upgrades, which need no credentials, from
// flooding the log: it writes the first failure at once, then at most one
// line per authFailureLogInterval, which says how many failures went
// unlogged since the line before. It is safe for concurrent use.
type failureLog struct {
	mu       sync.Mutex
	next     time.Time // when the next line may be written
	unlogged int       // failures since the last line
}

func (f *failureLog) record(log *zap.Logger, now time.Time, reason string) {
	f.mu.Lock()
	if now.Before(f.next) {
		f.unlogged++
		f.mu.Unlock()
		return
	}
	n := f.unlogged
	f.unlogged, f.next = 0, now.Add(authFailureLogInterval)
	f.mu.Unlock()
	log.Info("audiohook upgrade unauthorized", zap.String("reason", reason), zap.Int("unlogged_before", n))
}

func reasonOf(err error) string {
	var se *SignatureError
	if errors.As(err, &se) {
		return se.Reason
	}
	return "unknown"
}

func (h *Handler) track(c *conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.draining {
		return false
	}
	h.conns[c] = struct{}{}
	h.wg.Add(1)
	return true
}

func (h *Handler) untrack(c *conn) {
	h.mu.Lock()
	delete(h.conns, c)
	h.mu.Unlock()
	h.wg.Done()
}

// Shutdown stops accepting connections, ends every live stream (each
// finalises its sessions and sends disconnect), and waits for the
// connections to end. When ctx expires first it drops the remaining
// sockets and returns ctx's error after they are gone. Shutdown is
// idempotent.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.draining = true
	conns := make([]*conn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	for _, c := range conns {
		c.drain()
	}
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
		h.cancel()
		return nil
	case <-ctx.Done():
		h.cancel()
		<-done
		return ctx.Err()
	}
}

// Connection states (section 3).
type state uint8

const (
	stateOpening state = iota
	stateActive
	statePaused
	stateClosing       // close received
	stateDisconnecting // disconnect sent, waiting for close
	stateErrored       // a violation was signalled
	stateUnauthorized
	stateClosed // closed sent
)

// conn is one AudioHook connection. The goroutine ServeHTTP starts for it
// owns it: it reads, and starts and waits for the stream's goroutine. The
// stream goroutine (Disconnect) and Shutdown (drain) send too. Writes are
// serialised by wmu alone: mu is held only for moments, never across a
// write, so a write that blocks (a client that stops reading, for up to
// the write timeout) never stalls the reader's handling of audio frames.
type conn struct {
	h             *Handler
	ws            *websocket.Conn
	log           *zap.Logger
	sessionID     string
	orgID         string
	correlationID string
	tenantID      string

	// wmu serialises writes: a sender holds it from taking its seq to
	// the end of its write, so that seq order is wire order. It is taken
	// before mu, never while holding mu.
	wmu sync.Mutex

	mu         sync.Mutex // guards what follows; never held across I/O
	state      state
	seq        int64 // last server seq sent
	clientSeq  int64 // last client seq processed
	drained    bool
	stream     Stream
	media      Media
	frameBytes int // bytes of one sample of all channels

	// owned by the reader goroutine
	probe     bool
	samples   int64         // samples per channel received
	discarded time.Duration // audio the client skipped
	runDone   chan struct{} // closed when the stream's Run returned
	// watchdog drops the socket when the client goes quiet, or lingers
	// after a disconnect or closed. Resetting it allocates nothing.
	watchdog *time.Timer
}

// serve runs the read loop until the connection ends, then ends the
// stream, waits for it, and closes the socket.
func (c *conn) serve(ctx context.Context, start time.Time) {
	c.mu.Lock()
	c.watchdog = time.AfterFunc(c.h.opts.IdleTimeout, func() { c.ws.CloseNow() })
	if c.state >= stateDisconnecting {
		c.watchdog.Reset(c.h.opts.CloseTimeout)
	}
	c.mu.Unlock()
	// Reads use a context that is never cancelled, because coder/websocket
	// registers a context.AfterFunc (allocating) on every read of a
	// cancellable one. Cancellation closes the socket instead, which ends
	// the read: one registration per connection, not per frame.
	stopClose := context.AfterFunc(ctx, func() { c.ws.CloseNow() })
	defer func() {
		stopClose()
		c.watchdog.Stop()
		c.endStream("socket")
		c.waitStream(ctx, 0)
		c.ws.CloseNow()
	}()
	endReason := "socket"
	c.h.opts.Observer.AudioHookStarted()
	defer func() { c.h.opts.Observer.AudioHookEnded(endReason) }()
	for {
		typ, buf, err := c.read()
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) && ce.Code == websocket.StatusMessageTooBig {
				c.h.opts.Observer.AudioHookViolation("too-big")
				endReason = "violation"
			}
			c.log.Debug("audiohook connection ended", zap.Error(err))
			return
		}
		c.mu.Lock()
		if c.state < stateDisconnecting {
			c.watchdog.Reset(c.h.opts.IdleTimeout)
		}
		c.mu.Unlock()
		if typ == websocket.MessageBinary {
			c.audio(ctx, *buf)
			readBufs.Put(buf)
			continue
		}
		done, reason := c.message(ctx, *buf, start)
		readBufs.Put(buf)
		if done {
			endReason = reason
			c.awaitSocketClose(ctx)
			return
		}
	}
}

// readBufs hold messages while they are handled. A connection spends
// nearly all its life waiting for the next message, so a buffer is taken
// only once a message has begun and given back when it has been handled:
// thousands of idle connections hold none.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// read reads one message into a buffer from readBufs, which grows to the
// message (at most MaxMessageSize). The caller gives the buffer back with
// readBufs.Put once done with the message. Closing the socket (watchdog,
// shutdown) ends a read.
func (c *conn) read() (websocket.MessageType, *[]byte, error) {
	typ, r, err := c.ws.Reader(context.Background())
	if err != nil {
		return 0, nil, err
	}
	buf := readBufs.Get().(*[]byte)
	b := (*buf)[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			*buf = b[:0]
			readBufs.Put(buf)
			return 0, nil, err
		}
	}
	*buf = b
	return typ, buf, nil
}

// message handles one text message. It reports whether the protocol is
// done (closed sent), with the reason to record.
func (c *conn) message(ctx context.Context, data []byte, start time.Time) (bool, string) {
	msg, err := parseClientMessage(data)
	if err != nil {
		c.violation(ctx, "envelope", err.Error())
		return false, ""
	}
	c.mu.Lock()
	st, lastClient, lastServer := c.state, c.clientSeq, c.seq
	c.mu.Unlock()
	switch {
	case msg.Seq != lastClient+1:
		c.setClientSeq(msg.Seq)
		c.violation(ctx, "seq", fmt.Sprintf("seq %d, expected %d", msg.Seq, lastClient+1))
		return false, ""
	case *msg.ServerSeq > lastServer:
		c.setClientSeq(msg.Seq)
		c.violation(ctx, "serverseq", fmt.Sprintf("serverseq %d is ahead of the last server seq %d", *msg.ServerSeq, lastServer))
		return false, ""
	case msg.ID != c.sessionID:
		c.setClientSeq(msg.Seq)
		c.violation(ctx, "id", "id does not match Audiohook-Session-Id")
		return false, ""
	}
	c.setClientSeq(msg.Seq)

	switch msg.Type {
	case TypeClose:
		var p CloseParameters
		json.Unmarshal(msg.Parameters, &p)
		if st == stateClosing {
			return false, "" // a second close is ignored
		}
		c.setState(stateClosing)
		c.endStream(closeReason(p.Reason))
		c.waitStream(ctx, c.h.opts.FinaliseTimeout)
		c.send(ctx, TypeClosed, struct{}{})
		c.setState(stateClosed)
		return true, closeReason(p.Reason)
	case TypeError:
		var p ErrorParameters
		json.Unmarshal(msg.Parameters, &p)
		c.log.Warn("audiohook client error", zap.Int("code", p.Code), zap.String("message", truncate(p.Message, 200)))
		return false, ""
	}
	if st >= stateClosing {
		return false, "" // stop signalling; only close is answered
	}
	switch msg.Type {
	case TypeOpen:
		if st != stateOpening {
			return false, "" // a second open is ignored
		}
		c.open(ctx, msg, start)
	case TypePing:
		if c.send(ctx, TypePong, struct{}{}) == nil {
			c.h.opts.Observer.AudioHookPong()
		}
	case TypeUpdate:
		c.log.Debug("audiohook update", zap.ByteString("parameters", msg.Parameters))
	case TypePaused:
		if st == stateActive {
			c.setState(statePaused)
			c.withStream(func(s Stream) { s.Pause(true) })
		}
	case TypeResumed:
		if d, ok := c.discardedParam(ctx, msg); ok && st == statePaused {
			c.discarded += d
			c.setState(stateActive)
			c.withStream(func(s Stream) { s.Discarded(d); s.Pause(false) })
		}
	case TypeDiscarded:
		if d, ok := c.discardedParam(ctx, msg); ok {
			c.discarded += d
			c.withStream(func(s Stream) { s.Discarded(d) })
		}
	default:
		c.log.Debug("audiohook message ignored", zap.String("type", truncate(msg.Type, 32)))
	}
	return false, ""
}

func (c *conn) discardedParam(ctx context.Context, msg Message) (time.Duration, bool) {
	var p DiscardedParameters
	if err := json.Unmarshal(msg.Parameters, &p); err != nil {
		c.violation(ctx, "parameters", msg.Type+": parameters are malformed")
		return 0, false
	}
	d, err := ParseDuration(p.Discarded)
	if err != nil {
		c.violation(ctx, "parameters", msg.Type+": discarded is not a duration")
		return 0, false
	}
	if _, err := ParseDuration(p.Start); err != nil {
		c.violation(ctx, "parameters", msg.Type+": start is not a duration")
		return 0, false
	}
	return d, true
}

// open answers open: opened first, then the stream starts.
func (c *conn) open(ctx context.Context, msg Message, start time.Time) {
	received := time.Now()
	var p OpenParameters
	if err := json.Unmarshal(msg.Parameters, &p); err != nil {
		c.violation(ctx, "open", openDecodeError(err))
		return
	}
	if err := validateOpen(p); err != nil {
		c.violation(ctx, "open", err.Error())
		return
	}
	if p.OrganizationID != c.orgID {
		c.h.opts.Observer.AudioHookAuthFailed("organization")
		c.log.Info("audiohook organization mismatch")
		c.sleepUntil(ctx, start.Add(c.h.opts.AuthFailureDelay))
		c.unauthorized(ctx)
		return
	}
	c.probe = p.ConversationID == NullUUID
	selected := []Media{}
	var media Media
	if i := c.h.opts.Consumer.SelectMedia(c.tenantID, p.ConversationID, p.Media); i >= 0 && i < len(p.Media) && p.Media[i].BytesPerSample() > 0 {
		media = p.Media[i]
		selected = append(selected, media)
	}
	c.mu.Lock()
	c.media = media
	c.frameBytes = media.BytesPerSample() * len(media.Channels)
	c.state = stateActive
	c.mu.Unlock()
	if err := c.send(ctx, TypeOpened, OpenedParameters{Media: selected}); err != nil {
		return
	}
	c.h.opts.Observer.AudioHookOpened(time.Since(received), c.probe)
	if c.probe {
		c.log.Debug("audiohook connection probe")
		return
	}
	info := StreamInfo{TenantID: c.tenantID, SessionID: c.sessionID, CorrelationID: c.correlationID,
		OrganizationID: p.OrganizationID, ConversationID: p.ConversationID, Participant: p.Participant,
		Language: p.Language, Media: media}
	stream, err := c.h.opts.Consumer.StartStream(ctx, info, c)
	if err != nil {
		c.log.Error("starting stream", zap.Error(err))
		c.Disconnect(ReasonError, "Server error: the stream could not be started")
		return
	}
	c.runDone = make(chan struct{})
	c.mu.Lock()
	c.stream = stream
	drained := c.drained
	c.mu.Unlock()
	go func() {
		defer close(c.runDone)
		stream.Run(ctx)
		c.afterRun()
	}()
	if drained {
		stream.End("shutdown")
	}
}

// audio handles a binary frame.
func (c *conn) audio(ctx context.Context, frame []byte) {
	c.h.opts.Observer.AudioHookFrame(len(frame))
	c.mu.Lock()
	st, fb, stream := c.state, c.frameBytes, c.stream
	c.mu.Unlock()
	switch {
	case st >= stateClosing:
		// After close, a violation, or our own disconnect (Genesys has a
		// frame in flight when it arrives), audio is dropped quietly.
		return
	case st != stateActive || fb == 0:
		c.violation(ctx, "audio-state", "audio received while the stream is not active")
		return
	case len(frame)%fb != 0 || len(frame) == 0:
		c.violation(ctx, "audio-length", fmt.Sprintf("audio frame of %d bytes is not whole samples of %d bytes", len(frame), fb))
		return
	}
	c.samples += int64(len(frame) / fb)
	if stream != nil {
		stream.Audio(frame)
	}
}

// violation signals a client protocol error with disconnect and ends the
// stream (section 3).
func (c *conn) violation(ctx context.Context, kind, text string) {
	c.h.opts.Observer.AudioHookViolation(kind)
	c.log.Info("audiohook protocol violation", zap.String("kind", kind), zap.String("detail", text))
	c.mu.Lock()
	st := c.state
	c.mu.Unlock()
	if st >= stateClosing {
		return
	}
	c.send(ctx, TypeDisconnect, DisconnectParameters{Reason: ReasonError, Info: "Client Error: " + text})
	c.setState(stateErrored)
	c.endStream("violation")
}

// openDecodeError says which field of open's parameters did not decode.
func openDecodeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("open: invalid %s: must be %s, not %s", truncate(te.Field, 64), te.Type, te.Value)
	}
	return "open: parameters are not a JSON object"
}

// unauthorized answers a failed authentication.
func (c *conn) unauthorized(ctx context.Context) {
	c.send(ctx, TypeDisconnect, DisconnectParameters{Reason: ReasonUnauthorized, Info: "unauthorized"})
	c.setState(stateUnauthorized)
}

// Disconnect implements Control.
func (c *conn) Disconnect(reason, info string) {
	c.mu.Lock()
	st := c.state
	c.mu.Unlock()
	if st >= stateClosing || st == stateOpening {
		return
	}
	ctx, cancel := context.WithTimeout(c.h.ctx, 5*time.Second)
	defer cancel()
	if c.send(ctx, TypeDisconnect, DisconnectParameters{Reason: reason, Info: info}) == nil {
		c.setState(stateDisconnecting)
	}
}

// drain ends the connection for a shutdown: the stream finalises and
// afterRun disconnects; a connection without a stream disconnects now.
func (c *conn) drain() {
	c.mu.Lock()
	c.drained = true
	stream, st, ws := c.stream, c.state, c.ws
	c.mu.Unlock()
	if stream != nil {
		stream.End("shutdown")
		return
	}
	switch st {
	case stateActive, statePaused:
		c.Disconnect(ReasonCompleted, "the server is shutting down")
	case stateOpening:
		if ws != nil {
			ws.CloseNow() // no open yet: nothing to signal
		}
	}
}

// afterRun runs on the stream goroutine when Run returns: a stream that
// ended for a shutdown disconnects its client.
func (c *conn) afterRun() {
	c.mu.Lock()
	drained := c.drained
	c.mu.Unlock()
	if drained {
		c.Disconnect(ReasonCompleted, "the server is shutting down")
	}
}

// writeTimeout bounds one write of a server message.
const writeTimeout = 5 * time.Second

// send writes one server message with the next seq. It holds wmu from
// taking the seq to the end of the write, so that seq order is wire
// order, and mu only to read and advance the sequence numbers.
func (c *conn) send(ctx context.Context, typ string, params any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	if c.state == stateClosed {
		c.mu.Unlock()
		return errors.New("audiohook: closed already sent")
	}
	c.seq++
	seq, clientSeq, ws := c.seq, c.clientSeq, c.ws
	c.mu.Unlock()
	out, err := json.Marshal(Message{Version: Version, ID: c.sessionID, Type: typ, Seq: seq, ClientSeq: &clientSeq, Parameters: p})
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	if err := ws.Write(wctx, websocket.MessageText, out); err != nil {
		c.log.Debug("audiohook write failed", zap.String("type", typ), zap.Error(err))
		return err
	}
	return nil
}

// setState moves to s. Entering a state that waits for the client's close
// starts the close timeout.
func (c *conn) setState(s state) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s >= stateDisconnecting && c.state < stateDisconnecting && c.watchdog != nil {
		c.watchdog.Reset(c.h.opts.CloseTimeout)
	}
	c.state = s
}

func (c *conn) setClientSeq(seq int64) {
	c.mu.Lock()
	c.clientSeq = seq
	c.mu.Unlock()
}

func (c *conn) withStream(f func(Stream)) {
	c.mu.Lock()
	s := c.stream
	c.mu.Unlock()
	if s != nil {
		f(s)
	}
}

func (c *conn) endStream(reason string) { c.withStream(func(s Stream) { s.End(reason) }) }

// waitStream waits for the stream's Run to return, at most limit (0 means
// until ctx ends).
func (c *conn) waitStream(ctx context.Context, limit time.Duration) {
	if c.runDone == nil {
		return
	}
	var timeout <-chan time.Time
	if limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-c.runDone:
	case <-timeout:
		c.log.Warn("stream finalisation exceeded its budget; answering close anyway", zap.Duration("budget", limit))
	case <-ctx.Done():
		<-c.runDone
	}
}

// awaitSocketClose waits for the client to close the socket after closed,
// reading and discarding what still arrives.
func (c *conn) awaitSocketClose(ctx context.Context) {
	c.watchdog.Reset(c.h.opts.CloseTimeout)
	for {
		_, buf, err := c.read()
		if err != nil {
			return
		}
		readBufs.Put(buf)
	}
}

// sleepUntil waits until t or until ctx ends.
func (c *conn) sleepUntil(ctx context.Context, t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}

// closeReason bounds a client's close reason for logs and metrics.
func closeReason(r string) string {
	switch r {
	case "end", "error", "disconnect", "reconnect":
		return r
	}
	return "other"
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

type nopObserver struct{}

func (nopObserver) AudioHookStarted()                   {}
func (nopObserver) AudioHookOpened(time.Duration, bool) {}
func (nopObserver) AudioHookEnded(string)               {}
func (nopObserver) AudioHookFrame(int)                  {}
func (nopObserver) AudioHookPong()                      {}
func (nopObserver) AudioHookViolation(string)           {}
func (nopObserver) AudioHookAuthFailed(string)          {}
