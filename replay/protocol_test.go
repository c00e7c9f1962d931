package replay

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/earshot-voice/earshot/audiohook"
	"github.com/earshot-voice/earshot/codec"
)

// scriptConn is the server side of one connection, played by a test
// script: it numbers what it sends, and records the client's messages.
type scriptConn struct {
	t      *testing.T
	ws     *websocket.Conn
	id     string
	seq    int64 // last server seq sent
	client int64 // last client seq received
	frames int   // binary frames received
	bytes  int
}

// next reads the next client text message, counting binary frames on
// the way.
func (c *scriptConn) next() (audiohook.Message, error) {
	for {
		typ, data, err := c.ws.Read(context.Background())
		if err != nil {
			return audiohook.Message{}, err
		}
		if typ == websocket.MessageBinary {
			c.frames++
			c.bytes += len(data)
			continue
		}
		var m audiohook.Message
		if err := json.Unmarshal(data, &m); err != nil {
			return m, err
		}
		if m.Seq != c.client+1 || m.ServerSeq == nil || *m.ServerSeq > c.seq || m.ID != c.id {
			c.t.Errorf("client %s: seq %d after %d, serverseq %v of %d, id %s", m.Type, m.Seq, c.client, m.ServerSeq, c.seq, m.ID)
		}
		c.client = m.Seq
		return m, nil
	}
}

// awaitFrames reads until n binary frames have arrived in all, answering
// pings; other text messages on the way are errors.
func (c *scriptConn) awaitFrames(n int) bool {
	for c.frames < n {
		typ, data, err := c.ws.Read(context.Background())
		if err != nil {
			c.t.Errorf("waiting for frame %d: %v", c.frames+1, err)
			return false
		}
		if typ == websocket.MessageBinary {
			c.frames++
			c.bytes += len(data)
			continue
		}
		var m audiohook.Message
		json.Unmarshal(data, &m)
		if m.Type != audiohook.TypePing || m.Seq != c.client+1 {
			c.t.Errorf("waiting for frame %d: %s", c.frames+1, data)
			return false
		}
		c.client = m.Seq
		c.send(audiohook.TypePong, nil)
	}
	return true
}

// expect reads client messages up to one of type typ; pings on the way
// are answered when pong is set.
func (c *scriptConn) expect(typ string, pong bool) (audiohook.Message, bool) {
	for {
		m, err := c.next()
		if err != nil {
			c.t.Errorf("waiting for %s: %v", typ, err)
			return m, false
		}
		switch {
		case m.Type == typ:
			return m, true
		case m.Type == audiohook.TypePing && pong:
			c.send(audiohook.TypePong, nil)
		case m.Type == audiohook.TypePing:
		default:
			c.t.Errorf("got %s, waiting for %s", m.Type, typ)
			return m, false
		}
	}
}

// send sends a server message; seqSkip > 0 breaks the numbering.
func (c *scriptConn) send(typ string, params any) { c.sendSeq(typ, params, 1) }

func (c *scriptConn) sendSeq(typ string, params any, step int64) {
	if params == nil {
		params = struct{}{}
	}
	p, _ := json.Marshal(params)
	c.seq += step
	clientSeq := c.client
	data, _ := json.Marshal(audiohook.Message{Version: "2", ID: c.id, Type: typ, Seq: c.seq, ClientSeq: &clientSeq, Parameters: p})
	if err := c.ws.Write(context.Background(), websocket.MessageText, data); err != nil {
		c.t.Errorf("send %s: %v", typ, err)
	}
}

// open reads open and answers opened with params.
func (c *scriptConn) open(params audiohook.OpenedParameters) bool {
	m, ok := c.expect(audiohook.TypeOpen, false)
	if !ok {
		return false
	}
	var p audiohook.OpenParameters
	json.Unmarshal(m.Parameters, &p)
	if len(p.Media) != 3 || !audiohook.ValidUUID(p.ConversationID) || p.ConversationID == audiohook.NullUUID {
		c.t.Errorf("open parameters %s", m.Parameters)
	}
	if params.Media == nil {
		params.Media = []audiohook.Media{}
	}
	c.send(audiohook.TypeOpened, params)
	return true
}

var external = []audiohook.Media{{Type: "audio", Format: "PCMU", Channels: []string{"external"}, Rate: 8000}}

// scriptServer serves one scripted connection per call. After the
// script, it waits for the client to close the socket.
func scriptServer(t *testing.T, script func(c *scriptConn)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		defer ws.CloseNow()
		c := &scriptConn{t: t, ws: ws, id: r.Header.Get("Audiohook-Session-Id")}
		script(c)
		for {
			if _, _, err := ws.Read(context.Background()); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

func params[T any](t *testing.T, m audiohook.Message) T {
	t.Helper()
	var p T
	if err := json.Unmarshal(m.Parameters, &p); err != nil {
		t.Errorf("%s parameters %s: %v", m.Type, m.Parameters, err)
	}
	return p
}

func seconds(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := audiohook.ParseDuration(s)
	if err != nil {
		t.Error(err)
	}
	return d
}

// TestProtocol plays the client against scripted servers for the parts
// of the protocol an Earshot server does not exercise: pause and resume,
// startPaused, a media selection that was not offered, a server that
// breaks the sequencing, pongs that never come, and a close that is
// never answered. Each script checks what the client sends; the test
// checks how the summary counts the call.
func TestProtocol(t *testing.T) {
	dir := t.TempDir()
	// Half a second in 10 ms frames: 50 frames of 80 bytes.
	file := writeWAV(t, dir, "half.wav", codec.Format{Encoding: codec.L16, SampleRate: 8000, Channels: 1}, tone(4000, 8000, 440, 6000))
	const frame = 10 * time.Millisecond
	tests := []struct {
		name   string
		speed  float64
		timing func(*timing)
		script func(t *testing.T, c *scriptConn)
		want   func(t *testing.T, s *Summary)
	}{
		{name: "pause and resume", speed: 1, timing: func(tm *timing) { tm.firstPing, tm.ping = 5*time.Millisecond, 30*time.Millisecond },
			script: func(t *testing.T, c *scriptConn) {
				if !c.open(audiohook.OpenedParameters{Media: external}) {
					return
				}
				if !c.awaitFrames(2) {
					return
				}
				c.send(audiohook.TypePause, nil)
				if _, ok := c.expect(audiohook.TypePaused, true); !ok {
					return
				}
				before := c.frames
				// Hold the pause over two pings: at least one ping interval,
				// three frame periods.
				for range 2 {
					if _, ok := c.expect(audiohook.TypePing, false); !ok {
						return
					}
					c.send(audiohook.TypePong, nil)
				}
				c.send(audiohook.TypeResume, nil)
				m, ok := c.expect(audiohook.TypeResumed, true)
				if !ok {
					return
				}
				if c.frames != before {
					t.Errorf("%d frames arrived while paused", c.frames-before)
				}
				p := params[audiohook.DiscardedParameters](t, m)
				start, discarded := seconds(t, p.Start), seconds(t, p.Discarded)
				if start < 2*frame || discarded < frame || discarded%frame != 0 {
					t.Errorf("resumed start %v, discarded %v", start, discarded)
				}
				if m, ok = c.expect(audiohook.TypeClose, true); !ok {
					return
				}
				// The position covers the audio sent and the audio skipped.
				if pos := seconds(t, m.Position); pos != 500*time.Millisecond || time.Duration(c.bytes)*time.Second/8000+discarded != pos {
					t.Errorf("close at %v: %d bytes sent, %v discarded", pos, c.bytes, discarded)
				}
				c.send(audiohook.TypeClosed, nil)
			}, want: func(t *testing.T, s *Summary) {
				if s.Calls.Completed != 1 || s.Frames.Paused == 0 || s.Frames.Sent+s.Frames.Paused != 50 || s.PongRTTMS.Count < 2 {
					t.Errorf("calls %+v, frames %+v, pongs %d", s.Calls, s.Frames, s.PongRTTMS.Count)
				}
			}},
		{name: "start paused", speed: 1, script: func(t *testing.T, c *scriptConn) {
			if !c.open(audiohook.OpenedParameters{Media: external, StartPaused: true}) {
				return
			}
			if _, ok := c.expect(audiohook.TypePaused, false); !ok {
				return
			}
			if c.frames != 0 {
				t.Errorf("%d frames before paused", c.frames)
			}
			c.send(audiohook.TypeResume, nil)
			m, ok := c.expect(audiohook.TypeResumed, false)
			if !ok {
				return
			}
			if p := params[audiohook.DiscardedParameters](t, m); seconds(t, p.Start) != 0 {
				t.Errorf("resumed %+v: the pause began at the start", p)
			}
			if _, ok := c.expect(audiohook.TypeClose, false); ok {
				c.send(audiohook.TypeClosed, nil)
			}
		}, want: func(t *testing.T, s *Summary) {
			if s.Calls.Completed != 1 || s.Frames.Sent+s.Frames.Paused != 50 {
				t.Errorf("calls %+v, frames %+v", s.Calls, s.Frames)
			}
		}},
		{name: "selection not offered", script: func(t *testing.T, c *scriptConn) {
			if !c.open(audiohook.OpenedParameters{Media: []audiohook.Media{{Type: "audio", Format: "L16", Channels: []string{"external"}, Rate: 8000}}}) {
				return
			}
			m, ok := c.expect(audiohook.TypeError, false)
			if p := params[audiohook.ErrorParameters](t, m); !ok || p.Code != 400 {
				t.Errorf("error %s", m.Parameters)
			}
			m, ok = c.expect(audiohook.TypeClose, false)
			if p := params[audiohook.CloseParameters](t, m); !ok || p.Reason != "error" || c.frames != 0 {
				t.Errorf("close %s after %d frames", m.Parameters, c.frames)
			}
			c.send(audiohook.TypeClosed, nil)
		}, want: func(t *testing.T, s *Summary) {
			if s.Calls.FailedByKind["bad_selection"] != 1 || s.Calls.ByMedia["not_offered"] != 1 {
				t.Errorf("calls %+v", s.Calls)
			}
		}},
		{name: "server skips a seq", script: func(t *testing.T, c *scriptConn) {
			if !c.open(audiohook.OpenedParameters{Media: external}) {
				return
			}
			c.sendSeq(audiohook.TypeEvent, map[string]any{"entities": []any{}}, 2)
			if _, ok := c.expect(audiohook.TypeClose, false); ok {
				c.send(audiohook.TypeClosed, nil)
			}
		}, want: func(t *testing.T, s *Summary) {
			if s.Calls.FailedByKind["server_seq"] != 1 || s.Errors.ByKind["server_seq"] != 1 || s.Errors.Total != 1 {
				t.Errorf("calls %+v, errors %+v", s.Calls, s.Errors)
			}
		}},
		{name: "no pong", speed: 1, timing: func(tm *timing) { tm.firstPing, tm.ping = 5*time.Millisecond, 30*time.Millisecond },
			script: func(t *testing.T, c *scriptConn) {
				if !c.open(audiohook.OpenedParameters{Media: external}) {
					return
				}
				if _, ok := c.expect(audiohook.TypePing, false); !ok {
					return
				}
				m, ok := c.expect(audiohook.TypeError, false) // the next ping is not sent
				if p := params[audiohook.ErrorParameters](t, m); !ok || p.Code != 408 {
					t.Errorf("error %s", m.Parameters)
				}
				m, ok = c.expect(audiohook.TypeClose, false)
				if p := params[audiohook.CloseParameters](t, m); !ok || p.Reason != "error" {
					t.Errorf("close %s", m.Parameters)
				}
				c.send(audiohook.TypeClosed, nil)
			}, want: func(t *testing.T, s *Summary) {
				if s.Calls.FailedByKind["pong_timeout"] != 1 || s.PongRTTMS.Count != 0 {
					t.Errorf("calls %+v", s.Calls)
				}
			}},
		{name: "close never answered", timing: func(tm *timing) { tm.close = 50 * time.Millisecond },
			script: func(t *testing.T, c *scriptConn) {
				if !c.open(audiohook.OpenedParameters{Media: external}) {
					return
				}
				if _, ok := c.expect(audiohook.TypeClose, false); !ok {
					return
				}
				m, ok := c.expect(audiohook.TypeError, false)
				if p := params[audiohook.ErrorParameters](t, m); !ok || p.Code != 408 {
					t.Errorf("error %s", m.Parameters)
				}
			}, want: func(t *testing.T, s *Summary) {
				if s.Calls.FailedByKind["close_timeout"] != 1 {
					t.Errorf("calls %+v", s.Calls)
				}
			}},
		{name: "disconnect error mid-call", speed: 1, script: func(t *testing.T, c *scriptConn) {
			if !c.open(audiohook.OpenedParameters{Media: external}) {
				return
			}
			c.send(audiohook.TypeDisconnect, audiohook.DisconnectParameters{Reason: "error", Info: "Server error: testing"})
			m, ok := c.expect(audiohook.TypeClose, true)
			if p := params[audiohook.CloseParameters](t, m); !ok || p.Reason != "disconnect" {
				t.Errorf("close %s", m.Parameters)
			}
			c.send(audiohook.TypeClosed, nil)
		}, want: func(t *testing.T, s *Summary) {
			if s.Calls.FailedByKind["disconnect_error"] != 1 || s.Calls.DisconnectReasons["error"] != 1 ||
				!strings.Contains(s.Errors.Examples["disconnect_error"], "Server error: testing") {
				t.Errorf("calls %+v, errors %+v", s.Calls, s.Errors)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := scriptServer(t, func(c *scriptConn) { tt.script(t, c) })
			r, err := New(Options{URL: url, APIKey: testKey, Files: []string{file}, Speed: tt.speed, FrameDuration: frame})
			if err != nil {
				t.Fatal(err)
			}
			if tt.timing != nil {
				tt.timing(&r.timing)
			}
			s, err := r.Run(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if s.Calls.Total != 1 {
				t.Fatalf("calls %+v", s.Calls)
			}
			tt.want(t, s)
			if t.Failed() {
				var b strings.Builder
				s.WriteText(&b)
				t.Log(b.String())
			}
		})
	}
}
