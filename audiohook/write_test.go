package audiohook

import (
	"context"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/zap/zaptest"
)

// writeGate blocks the server's socket writes once armed, until released
// or the socket is closed, and tells when a write has blocked and whether
// it has returned.
type writeGate struct {
	armed    atomic.Bool
	blocked  chan struct{} // closed when the first armed write begins
	release  chan struct{} // closed by the test to let writes through
	returned atomic.Bool   // the blocked write has returned
	once     sync.Once
}

type gatedListener struct {
	net.Listener
	g *writeGate
}

func (l gatedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &gatedConn{Conn: c, g: l.g, closed: make(chan struct{})}, nil
}

// gatedConn is the server's end of a connection, whose writes the gate
// holds as a client that stops reading (a full TCP window) would.
type gatedConn struct {
	net.Conn
	g         *writeGate
	closed    chan struct{}
	closeOnce sync.Once
}

func (c *gatedConn) Write(p []byte) (int, error) {
	if c.g.armed.Load() {
		c.g.once.Do(func() { close(c.g.blocked) })
		select {
		case <-c.g.release:
		case <-c.closed:
			c.g.returned.Store(true)
			return 0, net.ErrClosed
		}
		c.g.returned.Store(true)
	}
	return c.Conn.Write(p)
}

func (c *gatedConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// signallingConsumer starts streams that report every audio frame.
type signallingConsumer struct {
	fakeConsumer
	streams chan *signallingStream
}

type signallingStream struct {
	*fakeStream
	frames chan int // the length of every frame handed over
}

func (s *signallingStream) Audio(frame []byte) {
	s.fakeStream.Audio(frame)
	s.frames <- len(frame)
}

func (f *signallingConsumer) StartStream(_ context.Context, info StreamInfo, ctl Control) (Stream, error) {
	s := &signallingStream{fakeStream: &fakeStream{info: info, ctl: ctl, ended: make(chan struct{})}, frames: make(chan int, 16)}
	f.streams <- s
	return s, nil
}

// TestBlockedWriteDoesNotStallAudio: while a message the stream goroutine
// sends (here a disconnect) is stuck in a socket write, the reader still
// hands the client's audio frames to the stream; the message goes out in
// order once the socket drains.
func TestBlockedWriteDoesNotStallAudio(t *testing.T) {
	gate := &writeGate{blocked: make(chan struct{}), release: make(chan struct{})}
	consumer := &signallingConsumer{streams: make(chan *signallingStream, 1)}
	h := NewHandler(Options{Authenticator: fakeAuth{}, Consumer: consumer, Logger: zaptest.NewLogger(t)})
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = gatedListener{Listener: srv.Listener, g: gate}
	srv.Start()
	released := false
	t.Cleanup(func() {
		if !released {
			close(gate.release)
		}
		h.Shutdown(context.Background())
		srv.Close()
	})
	s := &server{h: h, srv: srv, url: "ws" + strings.TrimPrefix(srv.URL, "http") + "/v1/audiohook"}
	c := s.dial(t, nil)
	if _, _, err := c.Open(t.Context(), openParams(testCall)); err != nil {
		t.Fatal(err)
	}
	st := <-consumer.streams

	gate.armed.Store(true)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		st.ctl.Disconnect(ReasonCompleted, "")
	}()
	<-gate.blocked // the disconnect is stuck in the socket

	if err := c.SendAudio(t.Context(), make([]byte, 1600)); err != nil {
		t.Fatal(err)
	}
	if n := <-st.frames; n != 1600 {
		t.Fatalf("the stream got a frame of %d bytes, want 1600", n)
	}
	if gate.returned.Load() {
		t.Fatal("the audio frame reached the stream only after the blocked write had ended: a slow write stalls the reader")
	}

	// The socket drains: the disconnect goes out, in sequence.
	released = true
	close(gate.release)
	<-sent
	m := expect(t, c, TypeDisconnect, 2, 1)
	if p := disconnectParams(t, m); p.Reason != ReasonCompleted {
		t.Fatalf("disconnect %+v", p)
	}
	send(t, c, TypeClose, CloseParameters{Reason: "disconnect"})
	expect(t, c, TypeClosed, 3, 2)
}
