package api_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// testBound bounds every wait of the tests below on the server. It is
// not a speed assertion: it only turns a hang into a failure, and the
// server answers each of them within a fraction of it.
const testBound = 10 * time.Second

// rawExchange sends head (a request line and headers, without the empty
// line) on a new connection, then calls body to write what follows, and
// returns the answer and, when waitClose, whether the server then closed
// the connection. body runs on its own goroutine and should stop when a
// write fails.
func rawExchange(t *testing.T, url, head string, body func(net.Conn), waitClose bool) (*http.Response, []byte, bool) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, head+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if body != nil {
			body(conn)
		}
	}()
	defer func() { conn.Close(); <-done }()
	conn.SetReadDeadline(time.Now().Add(testBound))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	resp.Body.Close()
	if !waitClose {
		return resp, raw, false
	}
	// The connection is closed when the next read ends before the bound:
	// with EOF, or with a reset when the server closed it with bytes of
	// the client still unread.
	_, err = br.ReadByte()
	var ne net.Error
	return resp, raw, err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// trickle writes b one byte every interval until it is written or a write
// fails.
func trickle(b []byte, interval time.Duration) func(net.Conn) {
	return func(c net.Conn) {
		for i := range b {
			if _, err := c.Write(b[i : i+1]); err != nil {
				return
			}
			time.Sleep(interval) // the client's pace, not a wait for the server
		}
	}
}

func TestStalledRequestBodies(t *testing.T) {
	e := newIDEnv(t, idOptions{scorer: true, readTimeout: 300 * time.Millisecond})
	key := e.creds.APIKey
	form := "grant_type=client_credentials&scope=roles&client_id=x&client_secret=" + strings.Repeat("y", 900)
	cases := []struct {
		name   string
		head   string
		body   func(net.Conn)
		status int
	}{
		{
			// Answered 401 without reading the body: the answer comes at
			// once and the connection closes, without waiting for a body
			// that never comes.
			name:   "unauthenticated, no body sent",
			head:   "POST /v1/audio_settings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10",
			status: http.StatusUnauthorized,
		},
		{
			name: "authenticated, body stalls",
			head: "POST /v1/audio_settings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\napikey: " + key,
			body: func(c net.Conn) { io.WriteString(c, `{"audi`) },
			// The body cannot be read whole before the deadline.
			status: http.StatusBadRequest,
		},
		{
			name: "token request trickled a byte at a time",
			head: fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d",
				tokenPath("default"), len(form)),
			body:   trickle([]byte(form), 20*time.Millisecond),
			status: http.StatusBadRequest,
		},
		{
			name:   "chunked body stalls",
			head:   "POST /v1/audio_settings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\napikey: " + key,
			body:   func(c net.Conn) { io.WriteString(c, "5\r\n{\"aud\r\n") },
			status: http.StatusBadRequest,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, raw, closed := rawExchange(t, e.srv.URL, tc.head, tc.body, true)
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("answer = %d %q %s, want %d JSON", resp.StatusCode, resp.Header.Get("Content-Type"), raw, tc.status)
			}
			if !closed {
				t.Error("the connection stayed open after a stalled body")
			}
		})
	}
}

// An upload may take longer than the read timeout while its bytes keep
// arriving at the minimum rate.
func TestUploadExtendsReadDeadline(t *testing.T) {
	e := newIDEnv(t, idOptions{scorer: true, readTimeout: 500 * time.Millisecond, minUploadRate: 64 << 10, maxUpload: 1 << 20})
	token := e.accessToken(t)
	body, ct := form(t, testWAV(t, mono8k, 40)) // 640 KB: ten seconds of deadline at 64 KiB/s
	head := fmt.Sprintf("POST /api/public/singles HTTP/1.1\r\nHost: x\r\nx-service-tenant-id: default\r\n"+
		"Authorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d", token, ct, len(body))
	// 32 KB every 50 ms: about 1 s for the whole body, twice the read
	// timeout, at ten times the minimum rate.
	send := func(c net.Conn) {
		for r := bytes.NewReader(body); r.Len() > 0; {
			if _, err := io.CopyN(c, r, 32<<10); err != nil && err != io.EOF {
				return
			}
			time.Sleep(50 * time.Millisecond) // the client's pace
		}
	}
	resp, raw, _ := rawExchange(t, e.srv.URL, head, send, false)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("slow upload = %d %s", resp.StatusCode, raw)
	}
}
