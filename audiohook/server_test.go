package audiohook

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	testOrg    = "d7934305-0972-4844-938e-9060eef73d05"
	testCall   = "5b6a0a3c-52a4-4a8e-9b0f-6b5d2f9c1e77"
	signedKey  = "key-with-secret"
	plainKey   = "key-without-secret"
	testSecret = "0123456789abcdef0123456789abcdef"
)

type fakeAuth struct{}

func (fakeAuth) AuthenticateAudioHook(_ context.Context, key string) (string, []byte, error) {
	switch key {
	case signedKey:
		return "tenant-a", []byte(testSecret), nil
	case plainKey:
		return "tenant-a", nil, nil
	}
	return "", nil, ErrUnauthorized
}

// fakeStream records what the connection hands it.
type fakeStream struct {
	info StreamInfo
	ctl  Control

	mu        sync.Mutex
	bytes     int
	frames    int
	discarded time.Duration
	pauses    []bool
	ends      []string
	endOnce   sync.Once
	ended     chan struct{}
}

func (s *fakeStream) Run(ctx context.Context) {
	select {
	case <-s.ended:
	case <-ctx.Done():
	}
}
func (s *fakeStream) Audio(frame []byte) {
	s.mu.Lock()
	s.bytes += len(frame)
	s.frames++
	s.mu.Unlock()
}
func (s *fakeStream) Discarded(d time.Duration) { s.mu.Lock(); s.discarded += d; s.mu.Unlock() }
func (s *fakeStream) Pause(p bool)              { s.mu.Lock(); s.pauses = append(s.pauses, p); s.mu.Unlock() }
func (s *fakeStream) End(reason string) {
	s.mu.Lock()
	s.ends = append(s.ends, reason)
	s.mu.Unlock()
	s.endOnce.Do(func() { close(s.ended) })
}

func (s *fakeStream) endReasons() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ends...)
}

type fakeConsumer struct {
	mu      sync.Mutex
	streams []*fakeStream
	started chan struct{} // one send per started stream
	pick    func(offered []Media) int
}

func (f *fakeConsumer) SelectMedia(_, _ string, offered []Media) int {
	if f.pick != nil {
		return f.pick(offered)
	}
	for i, m := range offered {
		if m.Format == "PCMU" && len(m.Channels) == 1 && m.Channels[0] == "external" {
			return i
		}
	}
	return -1
}

func (f *fakeConsumer) StartStream(_ context.Context, info StreamInfo, ctl Control) (Stream, error) {
	s := &fakeStream{info: info, ctl: ctl, ended: make(chan struct{})}
	f.mu.Lock()
	f.streams = append(f.streams, s)
	f.mu.Unlock()
	f.started <- struct{}{}
	return s, nil
}

// stream waits for the one stream to have started (StartStream runs right
// after opened is sent) and returns it.
func (f *fakeConsumer) stream(t *testing.T) *fakeStream {
	t.Helper()
	f.mu.Lock()
	n := len(f.streams)
	f.mu.Unlock()
	if n == 0 {
		select {
		case <-f.started:
		case <-time.After(5 * time.Second):
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.streams) != 1 {
		t.Fatalf("%d streams started, want 1", len(f.streams))
	}
	return f.streams[0]
}

// server is a Handler on httptest.
type server struct {
	h        *Handler
	srv      *httptest.Server
	consumer *fakeConsumer
	url      string
}

func newServer(t *testing.T, edit func(*Options)) *server {
	t.Helper()
	consumer := &fakeConsumer{started: make(chan struct{}, 8)}
	opts := Options{Authenticator: fakeAuth{}, Consumer: consumer, Logger: zaptest.NewLogger(t),
		AuthFailureDelay: 50 * time.Millisecond, CloseTimeout: 2 * time.Second}
	if edit != nil {
		edit(&opts)
	}
	h := NewHandler(opts)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Shutdown(context.Background())
		srv.Close()
	})
	return &server{h: h, srv: srv, consumer: consumer, url: "ws" + strings.TrimPrefix(srv.URL, "http") + "/v1/audiohook"}
}

func (s *server) dial(t *testing.T, edit func(*ClientOptions)) *Client {
	t.Helper()
	opts := ClientOptions{URL: s.url, APIKey: signedKey, Secret: []byte(testSecret), OrganizationID: testOrg}
	if edit != nil {
		edit(&opts)
	}
	c, _, err := Dial(t.Context(), opts)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Drop() })
	return c
}

func offer() []Media {
	return []Media{
		{Type: "audio", Format: "PCMU", Channels: []string{"external", "internal"}, Rate: 8000},
		{Type: "audio", Format: "PCMU", Channels: []string{"external"}, Rate: 8000},
		{Type: "audio", Format: "PCMU", Channels: []string{"internal"}, Rate: 8000},
	}
}

func openParams(conversation string) OpenParameters {
	return OpenParameters{OrganizationID: testOrg, ConversationID: conversation,
		Participant: Participant{ID: "11111111-2222-4333-8444-555555555555", ANI: "+15551234567", DNIS: "+15557654321"},
		Media:       offer(), Language: "en-US"}
}

// expect receives the next server message and checks its type, seq and
// clientseq, the envelope every server message must have.
func expect(t *testing.T, c *Client, typ string, seq, clientSeq int64) Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	m, err := c.Receive(ctx)
	if err != nil {
		t.Fatalf("waiting for %s: %v", typ, err)
	}
	if m.Type != typ || m.Seq != seq || m.ClientSeq == nil || *m.ClientSeq != clientSeq ||
		m.Version != "2" || m.ID != c.SessionID || !isJSONObject(m.Parameters) {
		t.Fatalf("got %s seq=%d clientseq=%v id=%s params=%s; want %s seq=%d clientseq=%d",
			m.Type, m.Seq, deref(m.ClientSeq), m.ID, m.Parameters, typ, seq, clientSeq)
	}
	return m
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func send(t *testing.T, c *Client, typ string, params any) {
	t.Helper()
	if _, err := c.Send(t.Context(), typ, params); err != nil {
		t.Fatalf("send %s: %v", typ, err)
	}
}

func disconnectParams(t *testing.T, m Message) DisconnectParameters {
	t.Helper()
	var p DisconnectParameters
	if err := json.Unmarshal(m.Parameters, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// expectSocketClosed waits for the server to end the connection.
func expectSocketClosed(t *testing.T, c *Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if m, err := c.Receive(ctx); err == nil {
		t.Fatalf("got %s after the end, want the socket closed", m.Type)
	}
}

func TestConnectionProbe(t *testing.T) {
	s := newServer(t, nil)
	c := s.dial(t, nil)
	op, _, err := c.Open(t.Context(), openParams(NullUUID))
	if err != nil {
		t.Fatal(err)
	}
	if len(op.Media) != 1 || !op.Media[0].Equal(offer()[1]) {
		t.Fatalf("probe opened media %+v", op.Media)
	}
	send(t, c, TypeClose, CloseParameters{Reason: "end"})
	expect(t, c, TypeClosed, 2, 2)
	c.CloseSocket()
	if len(s.consumer.streams) != 0 {
		t.Fatal("a probe started a stream")
	}
}

func TestStreamLifecycle(t *testing.T) {
	s := newServer(t, nil)
	c := s.dial(t, nil)
	_, opened, err := c.Open(t.Context(), openParams(testCall))
	if err != nil {
		t.Fatal(err)
	}
	if opened.Seq != 1 || *opened.ClientSeq != 1 {
		t.Fatalf("opened seq=%d clientseq=%d", opened.Seq, *opened.ClientSeq)
	}
	frame := make([]byte, 1600)
	for range 3 {
		if err := c.SendAudio(t.Context(), frame); err != nil {
			t.Fatal(err)
		}
	}
	send(t, c, TypePing, map[string]string{"rtt": "PT0.01S"}) // seq 2
	expect(t, c, TypePong, 2, 2)
	send(t, c, TypePaused, nil) // 3
	c.Advance(2 * time.Second)
	send(t, c, TypeResumed, DiscardedParameters{Start: "PT0.6S", Discarded: "PT2S"})   // 4
	send(t, c, TypeDiscarded, DiscardedParameters{Start: "PT2.6S", Discarded: "PT1S"}) // 5
	send(t, c, TypeUpdate, map[string]string{"language": "fr-FR"})                     // 6
	send(t, c, "dtmf", map[string]string{"digit": "5"})                                // 7: unknown, ignored
	send(t, c, TypeError, ErrorParameters{Code: 400, Message: "something odd"})        // 8: logged only
	send(t, c, TypePing, nil)                                                          // 9
	expect(t, c, TypePong, 3, 9)
	if err := c.SendAudio(t.Context(), frame[:800]); err != nil {
		t.Fatal(err)
	}
	send(t, c, TypeClose, CloseParameters{Reason: "end"}) // 10
	expect(t, c, TypeClosed, 4, 10)
	c.CloseSocket()

	st := s.consumer.stream(t)
	if st.info.ConversationID != testCall || st.info.TenantID != "tenant-a" || st.info.OrganizationID != testOrg ||
		st.info.SessionID != c.SessionID || !st.info.Media.Equal(offer()[1]) || st.info.Participant.ANI != "+15551234567" {
		t.Errorf("stream info %+v", st.info)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.frames != 4 || st.bytes != 5600 || st.discarded != 3*time.Second {
		t.Errorf("stream got %d frames, %d bytes, %v discarded", st.frames, st.bytes, st.discarded)
	}
	if len(st.pauses) != 2 || !st.pauses[0] || st.pauses[1] {
		t.Errorf("pauses %v", st.pauses)
	}
	if len(st.ends) == 0 || st.ends[0] != "end" {
		t.Errorf("end reasons %v", st.ends)
	}
}

func TestClientErrorThenClose(t *testing.T) {
	s := newServer(t, nil)
	c := s.dial(t, nil)
	if _, _, err := c.Open(t.Context(), openParams(testCall)); err != nil {
		t.Fatal(err)
	}
	send(t, c, TypeError, ErrorParameters{Code: 500, Message: "Internal client error"}) // 2
	send(t, c, TypeClose, CloseParameters{Reason: "error"})                             // 3
	expect(t, c, TypeClosed, 2, 3)
	if got := s.consumer.stream(t).endReasons(); got[0] != "error" {
		t.Errorf("end reasons %v", got)
	}
}

func TestServerDisconnect(t *testing.T) {
	var violations countingObserver
	s := newServer(t, func(o *Options) { o.Observer = &violations })
	c := s.dial(t, nil)
	if _, _, err := c.Open(t.Context(), openParams(testCall)); err != nil {
		t.Fatal(err)
	}
	s.consumer.stream(t).ctl.Disconnect(ReasonCompleted, "")
	m := expect(t, c, TypeDisconnect, 2, 1)
	if p := disconnectParams(t, m); p.Reason != ReasonCompleted {
		t.Fatalf("disconnect %+v", p)
	}
	// A frame the client had in flight is not a violation.
	c.SendAudio(t.Context(), make([]byte, 1600))
	s.consumer.stream(t).ctl.Disconnect(ReasonCompleted, "")     // not sent twice
	send(t, c, TypeClose, CloseParameters{Reason: "disconnect"}) // 2
	expect(t, c, TypeClosed, 3, 2)
	if n := violations.count(); n != 0 {
		t.Errorf("%d violations counted", n)
	}
}

// countingObserver counts protocol violations.
type countingObserver struct {
	nopObserver
	mu sync.Mutex
	n  int
}

func (o *countingObserver) AudioHookViolation(string) { o.mu.Lock(); o.n++; o.mu.Unlock() }
func (o *countingObserver) count() int                { o.mu.Lock(); defer o.mu.Unlock(); return o.n }

func TestSequencingViolations(t *testing.T) {
	tests := []struct {
		name   string
		inject func(t *testing.T, c *Client)
		want   string // in the disconnect info
		// clientSeq is what the disconnect acknowledges: the offending
		// message's seq when it was readable, else the open's.
		clientSeq int64
	}{
		{"seq gap", func(t *testing.T, c *Client) { c.SkipSeq(); send(t, c, TypePing, nil) }, "seq 3, expected 2", 3},
		{"seq repeated", func(t *testing.T, c *Client) {
			c.SendRaw(t.Context(), rawMessage(c, 1, 1, TypePing, `{}`))
		}, "seq 1, expected 2", 1},
		{"serverseq ahead", func(t *testing.T, c *Client) {
			c.SendRaw(t.Context(), rawMessage(c, 2, 5, TypePing, `{}`))
		}, "serverseq 5", 2},
		{"other id", func(t *testing.T, c *Client) {
			c.SendRaw(t.Context(), []byte(`{"version":"2","id":"`+testCall+`","type":"ping","seq":2,"serverseq":1,"position":"PT0S","parameters":{}}`))
		}, "id does not match", 2},
		{"no parameters", func(t *testing.T, c *Client) {
			c.SendRaw(t.Context(), []byte(`{"version":"2","id":"`+c.SessionID+`","type":"ping","seq":2,"serverseq":1,"position":"PT0S"}`))
		}, "parameters", 1},
		{"wrong version", func(t *testing.T, c *Client) {
			c.SendRaw(t.Context(), []byte(`{"version":"1","id":"`+c.SessionID+`","type":"ping","seq":2,"serverseq":1,"position":"PT0S","parameters":{}}`))
		}, "version", 1},
		{"bad position", func(t *testing.T, c *Client) {
			c.SendRaw(t.Context(), []byte(`{"version":"2","id":"`+c.SessionID+`","type":"ping","seq":2,"serverseq":1,"position":"1.5","parameters":{}}`))
		}, "position", 1},
		{"not JSON", func(t *testing.T, c *Client) { c.SendRaw(t.Context(), []byte(`ping`)) }, "not a JSON object", 1},
		{"odd stereo frame", func(t *testing.T, c *Client) { c.SendAudio(t.Context(), make([]byte, 1601)) }, "not whole samples", 1},
		{"empty frame", func(t *testing.T, c *Client) { c.SendAudio(t.Context(), nil) }, "not whole samples", 1},
		{"bad resumed", func(t *testing.T, c *Client) {
			send(t, c, TypePaused, nil)
			send(t, c, TypeResumed, map[string]string{"start": "x", "discarded": "PT1S"})
		}, "start is not a duration", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, nil)
			s.consumer.pick = func([]Media) int { return 0 } // stereo
			c := s.dial(t, nil)
			if _, _, err := c.Open(t.Context(), openParams(testCall)); err != nil {
				t.Fatal(err)
			}
			tt.inject(t, c)
			m := expect(t, c, TypeDisconnect, 2, tt.clientSeq)
			if p := disconnectParams(t, m); p.Reason != ReasonError || !strings.HasPrefix(p.Info, "Client Error: ") || !strings.Contains(p.Info, tt.want) {
				t.Fatalf("disconnect %+v, want error mentioning %q", p, tt.want)
			}
			// The server stops signalling (no pong), but still answers close.
			send(t, c, TypePing, nil)
			send(t, c, TypeClose, CloseParameters{Reason: "disconnect"})
			expect(t, c, TypeClosed, 3, c.Seq())
			if got := s.consumer.stream(t).endReasons(); got[0] != "violation" {
				t.Errorf("end reasons %v", got)
			}
		})
	}
}

// rawMessage builds a client message with chosen seq and serverseq; it
// does not advance the client.
func rawMessage(c *Client, seq, serverSeq int64, typ, params string) []byte {
	m := Message{Version: "2", ID: c.SessionID, Type: typ, Seq: seq, ServerSeq: &serverSeq, Position: "PT0S", Parameters: json.RawMessage(params)}
	b, _ := json.Marshal(m)
	return b
}

func TestAudioBeforeOpen(t *testing.T) {
	s := newServer(t, nil)
	c := s.dial(t, nil)
	c.SendAudio(t.Context(), make([]byte, 160))
	m := expect(t, c, TypeDisconnect, 1, 0)
	if p := disconnectParams(t, m); p.Reason != ReasonError || !strings.Contains(p.Info, "not active") {
		t.Fatalf("disconnect %+v", p)
	}
	send(t, c, TypeClose, CloseParameters{Reason: "disconnect"})
	expect(t, c, TypeClosed, 2, 1)
}

func TestOversizedMessage(t *testing.T) {
	s := newServer(t, nil)
	c := s.dial(t, nil)
	if _, _, err := c.Open(t.Context(), openParams(testCall)); err != nil {
		t.Fatal(err)
	}
	c.SendAudio(t.Context(), make([]byte, MaxMessageSize+1))
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := c.Receive(ctx)
	if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Fatalf("after an oversized frame: %v, want close 1009", err)
	}
	waitEnded(t, s.consumer.stream(t), "socket")
}

func waitEnded(t *testing.T, st *fakeStream, reason string) {
	t.Helper()
	select {
	case <-st.ended:
	case <-time.After(5 * time.Second):
		t.Fatal("stream not ended")
	}
	if got := st.endReasons(); got[0] != reason {
		t.Fatalf("end reasons %v, want %s first", got, reason)
	}
}

func TestSocketDroppedMidCall(t *testing.T) {
	s := newServer(t, nil)
	c := s.dial(t, nil)
	if _, _, err := c.Open(t.Context(), openParams(testCall)); err != nil {
		t.Fatal(err)
	}
	c.SendAudio(t.Context(), make([]byte, 1600))
	c.Drop()
	waitEnded(t, s.consumer.stream(t), "socket")
}

func TestAuthentication(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name string
		opts func(*ClientOptions)
		open func(OpenParameters) OpenParameters
		ok   bool
	}{
		{"signed", nil, nil, true},
		{"key without secret, unsigned", func(o *ClientOptions) { o.APIKey, o.Secret = plainKey, nil }, nil, true},
		{"bad signature", func(o *ClientOptions) { o.Secret = []byte("not the secret") }, nil, false},
		{"stale signature", func(o *ClientOptions) { o.Now = func() time.Time { return now.Add(-time.Minute) } }, nil, false},
		{"future signature", func(o *ClientOptions) { o.Now = func() time.Time { return now.Add(time.Minute) } }, nil, false},
		{"unsigned with a secret configured", func(o *ClientOptions) { o.Secret = nil }, nil, false},
		{"wrong key", func(o *ClientOptions) { o.APIKey = "nobody" }, nil, false},
		{"no key", func(o *ClientOptions) { o.APIKey, o.Secret = "", nil }, nil, false},
		{"wrong organization id", nil, func(p OpenParameters) OpenParameters {
			p.OrganizationID = "0f0f0f0f-0000-4000-8000-000000000000"
			return p
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, nil)
			start := time.Now()
			c := s.dial(t, tt.opts)
			p := openParams(testCall)
			if tt.open != nil {
				p = tt.open(p)
			}
			send(t, c, TypeOpen, p)
			if tt.ok {
				expect(t, c, TypeOpened, 1, 1)
				return
			}
			m, err := c.Receive(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if m.Type != TypeDisconnect || m.Seq != 1 {
				t.Fatalf("got %s seq %d, want disconnect seq 1", m.Type, m.Seq)
			}
			if p := disconnectParams(t, m); p.Reason != ReasonUnauthorized || p.Info != "unauthorized" {
				t.Fatalf("disconnect %+v: the reason must not leak", p)
			}
			if elapsed := time.Since(start); elapsed < 50*time.Millisecond {
				t.Fatalf("unauthorized answered after %v, before the minimum delay", elapsed)
			}
			send(t, c, TypeClose, CloseParameters{Reason: "disconnect"})
			expect(t, c, TypeClosed, 2, c.Seq())
			if len(s.consumer.streams) != 0 {
				t.Fatal("an unauthorized connection started a stream")
			}
		})
	}
}

func TestReplayedSignature(t *testing.T) {
	s := newServer(t, nil)
	first := s.dial(t, nil)
	expectOpened := func(c *Client) { send(t, c, TypeOpen, openParams(testCall)); expect(t, c, TypeOpened, 1, 1) }
	expectOpened(first)
	// Replay the exact signed headers of a new upgrade.
	h := http.Header{}
	setIDs(h, testOrg, "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", "1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed")
	u := strings.TrimPrefix(s.url, "ws://")
	host, path, _ := strings.Cut(u, "/")
	SignHeaders(h, "/"+path, host, signedKey, []byte(testSecret), "the-same-nonce-0123456789", time.Now())
	dial := func() *Client {
		c := s.dial(t, func(o *ClientOptions) {
			o.Secret, o.Header, o.SessionID = nil, h, "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d"
		})
		return c
	}
	ok := dial()
	send(t, ok, TypeOpen, openParams(testCall))
	expect(t, ok, TypeOpened, 1, 1)
	replayed := dial()
	send(t, replayed, TypeOpen, openParams(testCall))
	m, err := replayed.Receive(t.Context())
	if err != nil || m.Type != TypeDisconnect || disconnectParams(t, m).Reason != ReasonUnauthorized {
		t.Fatalf("replayed signature: %v %v", m.Type, err)
	}
}

func TestMissingSessionIDHeader(t *testing.T) {
	s := newServer(t, nil)
	_, resp, err := Dial(t.Context(), ClientOptions{URL: s.url, APIKey: plainKey, SessionID: "not-a-uuid"})
	if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("dial without a session id: %v %v", resp, err)
	}
}

func TestShutdownDrainsLiveCalls(t *testing.T) {
	s := newServer(t, nil)
	c := s.dial(t, nil)
	if _, _, err := c.Open(t.Context(), openParams(testCall)); err != nil {
		t.Fatal(err)
	}
	c.SendAudio(t.Context(), make([]byte, 1600))
	probe := s.dial(t, nil)
	if _, _, err := probe.Open(t.Context(), openParams(NullUUID)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.h.Shutdown(context.Background()) }()

	for _, cl := range []*Client{c, probe} {
		m := expect(t, cl, TypeDisconnect, 2, 1)
		if p := disconnectParams(t, m); p.Reason != ReasonCompleted {
			t.Fatalf("drain disconnect %+v", p)
		}
		send(t, cl, TypeClose, CloseParameters{Reason: "disconnect"})
		expect(t, cl, TypeClosed, 3, 2)
		cl.CloseSocket()
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if got := s.consumer.stream(t).endReasons(); got[0] != "shutdown" {
		t.Errorf("end reasons %v", got)
	}
	// New upgrades are refused while draining.
	_, resp, err := Dial(t.Context(), ClientOptions{URL: s.url, APIKey: plainKey})
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("dial after shutdown: %v %v", resp, err)
	}
}

func TestIdleConnectionDropped(t *testing.T) {
	s := newServer(t, func(o *Options) { o.IdleTimeout = 100 * time.Millisecond })
	c := s.dial(t, nil)
	if _, _, err := c.Open(t.Context(), openParams(testCall)); err != nil {
		t.Fatal(err)
	}
	expectSocketClosed(t, c)
	waitEnded(t, s.consumer.stream(t), "socket")
}

func TestNoMediaMatch(t *testing.T) {
	s := newServer(t, nil)
	s.consumer.pick = func([]Media) int { return -1 }
	c := s.dial(t, nil)
	op, _, err := c.Open(t.Context(), openParams(testCall))
	if err != nil || len(op.Media) != 0 {
		t.Fatalf("opened %+v %v, want no media", op, err)
	}
	if st := s.consumer.stream(t); st.info.Media.Format != "" {
		t.Fatalf("stream media %+v", st.info.Media)
	}
	c.SendAudio(t.Context(), make([]byte, 160)) // no media selected: a violation
	m := expect(t, c, TypeDisconnect, 2, 1)
	if p := disconnectParams(t, m); p.Reason != ReasonError {
		t.Fatalf("%+v", p)
	}
}

// burstLimiter refuses a client address after burst failures; it never
// forgives them (the test has no clock to move).
type burstLimiter struct {
	burst int
	mu    sync.Mutex
	fails map[string]int
}

func (l *burstLimiter) addr(r *http.Request) string {
	host, _, _ := strings.Cut(r.RemoteAddr, ":")
	return host
}

func (l *burstLimiter) Wait(r *http.Request) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fails[l.addr(r)] >= l.burst {
		return 2500 * time.Millisecond
	}
	return 0
}

func (l *burstLimiter) Fail(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fails[l.addr(r)]++
}

func TestFailedUpgradesLimitedAndLogAggregated(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	now := time.Now()
	limiter := &burstLimiter{burst: 20, fails: map[string]int{}}
	s := newServer(t, func(o *Options) {
		o.Limiter, o.Logger, o.Now = limiter, zap.New(core), func() time.Time { return now }
	})
	// 40 upgrades with a wrong key, in four waves of ten at once: the
	// first 20 are heard (and answered unauthorized after the upgrade),
	// the rest refused with 429 before upgrading. (Upgrades in flight
	// together may all pass the check before any has failed; a wave's
	// failures are charged before its answers are sent.)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for i := range 40 {
		if i%10 == 0 {
			wg.Wait()
		}
		wg.Go(func() {
			c, resp, err := Dial(t.Context(), ClientOptions{URL: s.url, APIKey: "nobody", OrganizationID: testOrg})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if resp == nil {
					t.Errorf("dial: %v", err)
					return
				}
				codes[resp.StatusCode]++
				return
			}
			codes[http.StatusSwitchingProtocols]++
			if _, err := c.Send(t.Context(), TypeOpen, openParams(testCall)); err == nil {
				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
				m, err := c.Receive(ctx)
				cancel()
				if err != nil || m.Type != TypeDisconnect {
					t.Errorf("unauthorized upgrade: %v %v", m.Type, err)
				}
			}
			c.Drop()
		})
	}
	wg.Wait()
	if codes[http.StatusSwitchingProtocols] != 20 || codes[http.StatusTooManyRequests] != 20 {
		t.Errorf("answers to 40 bad upgrades: %v", codes)
	}
	// A valid upgrade from the same address is refused too, as JSON.
	_, resp, err := Dial(t.Context(), ClientOptions{URL: s.url, APIKey: signedKey, Secret: []byte(testSecret), OrganizationID: testOrg})
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests ||
		resp.Header.Get("Retry-After") != "3" || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("valid upgrade after the failures: %v %v", resp, err)
	}
	// One log line for the lot: the failures need no credentials, so each
	// must not write its own.
	if n := logs.FilterMessage("audiohook upgrade unauthorized").Len(); n != 1 {
		t.Errorf("%d log lines for %d failed upgrades, want 1", n, codes[http.StatusSwitchingProtocols])
	}
	// The next line, once the interval has passed, counts the others.
	now = now.Add(authFailureLogInterval)
	limiter.fails = map[string]int{}
	c := s.dial(t, func(o *ClientOptions) { o.APIKey, o.Secret = "nobody", nil })
	send(t, c, TypeOpen, openParams(testCall))
	if m, err := c.Receive(t.Context()); err != nil || m.Type != TypeDisconnect {
		t.Fatalf("unauthorized upgrade: %v %v", m.Type, err)
	}
	lines := logs.FilterMessage("audiohook upgrade unauthorized").All()
	if len(lines) != 2 || lines[1].ContextMap()["unlogged_before"] != int64(codes[http.StatusSwitchingProtocols]-1) {
		t.Errorf("log lines %v, want a second one counting %d", lines, codes[http.StatusSwitchingProtocols]-1)
	}
}

// A refused open names the field at fault.
func TestInvalidOpenNamesTheField(t *testing.T) {
	tests := []struct {
		name   string
		params string
		want   string
	}{
		{"bad conversation id", `{"organizationId":"` + testOrg + `","conversationId":"nope","participant":{"id":"11111111-2222-4333-8444-555555555555"},"media":[]}`, "conversationId"},
		{"bad participant id", `{"organizationId":"` + testOrg + `","conversationId":"` + testCall + `","participant":{"id":"x"},"media":[]}`, "participant.id"},
		{"participant not an object", `{"organizationId":"` + testOrg + `","conversationId":"` + testCall + `","participant":"x","media":[]}`, "participant"},
		{"rate not a number", `{"organizationId":"` + testOrg + `","conversationId":"` + testCall + `","participant":{"id":"11111111-2222-4333-8444-555555555555"},"media":[{"type":"audio","format":"PCMU","channels":["external"],"rate":"8000"}]}`, "media.rate"},
		{"bad media", `{"organizationId":"` + testOrg + `","conversationId":"` + testCall + `","participant":{"id":"11111111-2222-4333-8444-555555555555"},"media":[{"type":"video","format":"PCMU","channels":["external"],"rate":8000}]}`, "media"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, nil)
			c := s.dial(t, nil)
			c.SendRaw(t.Context(), rawMessage(c, 1, 0, TypeOpen, tt.params))
			m := expect(t, c, TypeDisconnect, 1, 1)
			if p := disconnectParams(t, m); p.Reason != ReasonError || !strings.Contains(p.Info, tt.want) {
				t.Fatalf("disconnect %+v, want one naming %q", p, tt.want)
			}
		})
	}
}
