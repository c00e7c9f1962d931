package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/earshot-voice/earshot/audiohook"
)

// Fault tests: the whole service in-process, on loopback, under clients
// that misbehave. Each is bounded in time; the bounds turn a hang into a
// failure and are far above what the service needs.

// A client that never reads what the server sends: once the socket's
// buffers are full, the server's write times out (5 s) and it drops the
// connection; meanwhile other calls are served. (Were the client's
// receive buffer tiny, TCP itself could stall both directions before the
// server's buffer fills: the connection then goes quiet, and the idle
// watchdog drops it after 60 s, the other bound.)
func TestFaultClientNeverReads(t *testing.T) {
	s := startStack(t, t.TempDir())
	defer s.stop()
	url := "ws" + strings.TrimPrefix(s.url, "http") + "/v1/audiohook"
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c, _, err := audiohook.Dial(ctx, audiohook.ClientOptions{URL: url, APIKey: s.key, Secret: s.secret, OrganizationID: orgID})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Drop()
	if _, err := c.Send(ctx, audiohook.TypeOpen, audiohook.OpenParameters{OrganizationID: orgID, ConversationID: uuid.NewString(),
		Participant: audiohook.Participant{ID: uuid.NewString()},
		Media:       []audiohook.Media{{Type: "audio", Format: "PCMU", Channels: []string{"external"}, Rate: 8000}}}); err != nil {
		t.Fatal(err)
	}
	// Pings, each answered with a pong nobody reads, until the server
	// gives up on the connection.
	flooded := make(chan int)
	go func() {
		pings := 0
		for ; ctx.Err() == nil; pings++ {
			if _, err := c.Send(ctx, audiohook.TypePing, struct{}{}); err != nil {
				break
			}
		}
		flooded <- pings
	}()
	metrics := "http://" + s.listener(t, "metrics") + "/metrics"
	start := time.Now()
	for {
		m := scrape(t, metrics)
		if m["earshot_audiohook_streams_active"] == 0 && m[`earshot_audiohook_streams_ended_total{reason="socket"}`] == 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the server kept a connection whose client never reads: %v", m)
		}
		time.Sleep(100 * time.Millisecond) // polling the server's metrics, bounded by ctx
	}
	t.Logf("dropped after %v", time.Since(start))
	c.Drop()
	t.Logf("the server dropped the connection after %d unread pongs", <-flooded)
	// Another call is served as usual.
	cl, _ := s.dial(uuid.NewString())
	cl.close("end", 2)
}

// Thousands of connections opened and dropped at every stage of a
// request leave nothing behind: the service answers, and its goroutines
// and open files return to what they were.
func TestFaultConnectionChurn(t *testing.T) {
	s := startStack(t, t.TempDir())
	defer s.stop()
	addr := strings.TrimPrefix(s.url, "http://")
	settle := func() (int, int) {
		runtime.GC()
		fds, _ := os.ReadDir("/proc/self/fd")
		return runtime.NumGoroutine(), len(fds)
	}
	// One request first, so that lazily started goroutines (the store's
	// connection, the HTTP client's) count in the baseline.
	if code, _ := s.rest("GET", "/v1/models", nil); code != http.StatusOK {
		t.Fatalf("models = %d", code)
	}
	baseG, baseFD := settle()

	stages := []string{
		"",                                   // connect, then drop
		"GET /v1/mod",                        // half a request line
		"GET /v1/models HTTP/1.1\r\nHost: x", // headers not ended
		"POST /v1/audio_settings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\napikey: " +
			s.key + "\r\n\r\n{\"audio", // half a body
		"GET /v1/audiohook HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
			"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", // an upgrade refused (no session id)
		"GET /alive HTTP/1.1\r\nHost: x\r\n\r\n", // a whole request, the answer unread
	}
	const total, parallel = 3000, 32
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallel)
	var failures sync.Map
	for i := range total {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c, err := net.DialTimeout("tcp", addr, 10*time.Second)
			if err != nil {
				failures.Store(err.Error(), true)
				return
			}
			defer c.Close()
			if stage := stages[i%len(stages)]; stage != "" {
				c.SetWriteDeadline(time.Now().Add(10 * time.Second))
				io.WriteString(c, stage)
			}
		})
	}
	wg.Wait()
	failures.Range(func(k, _ any) bool { t.Errorf("dial: %v", k); return true })

	// The service still answers...
	if code, _ := s.rest("GET", "/v1/models", nil); code != http.StatusOK {
		t.Fatalf("models after the churn = %d", code)
	}
	// ...and lets go of every connection. Handlers of half a body wait
	// for their read deadline (15 s) at most.
	deadline := time.Now().Add(60 * time.Second)
	for {
		g, fd := settle()
		if g <= baseG+5 && fd <= baseFD+5 {
			t.Logf("after %d connections: %d goroutines (%d before), %d files (%d before)", total, g, baseG, fd, baseFD)
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("after %d connections, %d goroutines (%d before) and %d open files (%d before) remain:\n%s",
				total, g, baseG, fd, baseFD, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(200 * time.Millisecond) // polling the process's own state, bounded above
	}
}
