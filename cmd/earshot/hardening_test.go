package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/earshot-voice/earshot/audiohook"
)

// Failed AudioHook upgrades count against the same limits as the REST
// interfaces: after the address's burst, upgrades and REST requests from
// it are refused with 429 before anything is checked, and the failures
// share one log line.
func TestAudioHookUpgradesShareTheFailureLimits(t *testing.T) {
	s := startStack(t, t.TempDir())
	defer s.stop()
	url := "ws" + strings.TrimPrefix(s.url, "http") + "/v1/audiohook"
	// A well-formed key of the right lookup with a wrong secret, as a brute
	// force would send.
	lookup, _, _ := strings.Cut(strings.TrimPrefix(s.key, "esk_"), "_")
	wrong := "esk_" + lookup + "_" + strings.Repeat("A", 43)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		codes = map[int]int{}
	)
	// Four waves of ten at once. Upgrades in flight together may all pass
	// the check before any of them has failed; each wave's failures are
	// charged before its answers are sent.
	for i := range 40 {
		if i%10 == 0 {
			wg.Wait()
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			c, resp, err := audiohook.Dial(ctx, audiohook.ClientOptions{URL: url, APIKey: wrong, OrganizationID: orgID})
			mu.Lock()
			switch {
			case err == nil:
				codes[http.StatusSwitchingProtocols]++
			case resp != nil:
				codes[resp.StatusCode]++
			default:
				t.Errorf("dial: %v", err)
			}
			mu.Unlock()
			if c == nil {
				return
			}
			defer c.Drop()
			// The unauthorized answer comes after the failure was logged.
			if _, err := c.Send(ctx, audiohook.TypeOpen, audiohook.OpenParameters{}); err != nil {
				t.Errorf("open: %v", err)
				return
			}
			if m, err := c.Receive(ctx); err != nil || m.Type != audiohook.TypeDisconnect {
				t.Errorf("bad upgrade answered %v %v, want disconnect", m.Type, err)
			}
		})
	}
	wg.Wait()
	// 20 failures exhaust the address's burst: the last two waves are
	// refused (but for one failure forgiven every 3 s meanwhile).
	if codes[http.StatusTooManyRequests] < 15 || codes[http.StatusSwitchingProtocols]+codes[http.StatusTooManyRequests] != 40 {
		t.Fatalf("answers to 40 bad upgrades: %v", codes)
	}
	// The right key from the same address is refused too: on AudioHook...
	_, resp, err := audiohook.Dial(t.Context(), audiohook.ClientOptions{URL: url, APIKey: s.key, Secret: s.secret, OrganizationID: orgID})
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("valid upgrade after the brute force: %v %v", resp, err)
	}
	// ...and on REST, which shares the limiters.
	if code, body := s.rest("GET", "/v1/models", nil); code != http.StatusTooManyRequests {
		t.Fatalf("REST after the brute force = %d %v", code, body)
	}
	n := 0
	for _, l := range s.lines() {
		if strings.Contains(l, `"audiohook upgrade unauthorized"`) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d log lines for %d failed upgrades, want 1", n, codes[http.StatusSwitchingProtocols])
	}
}

// A data directory that other users may enter is used, with a warning;
// the files the service creates in it are its owner's alone.
func TestOpenDataDirWarned(t *testing.T) {
	for _, mode := range []os.FileMode{0o700, 0o755} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if err := os.Mkdir(dir, mode); err != nil {
				t.Fatal(err)
			}
			os.Chmod(dir, mode) // whatever the umask
			s := startStack(t, dir)
			s.settings(1, "external") // a write: the -wal and -shm files exist
			warned := slices.ContainsFunc(s.lines(), func(l string) bool {
				return strings.Contains(l, `"level":"warn"`) && strings.Contains(l, "data directory is accessible to other users")
			})
			if warned != (mode&0o077 != 0) {
				t.Errorf("data dir %v: warned %v", mode, warned)
			}
			for _, f := range []string{"earshot.db", "earshot.db-wal", "earshot.db-shm", "master.key"} {
				if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("%s: %v %v, want mode 0600", f, fi.Mode().Perm(), err)
				}
			}
			s.stop()
		})
	}
}

// /metrics is unauthenticated: it is served on its own address only.
func TestMetricsOnlyOnTheirAddress(t *testing.T) {
	isolateEnv(t)
	inst := start(t, "--data-dir", t.TempDir())
	defer inst.stop()
	if code, _ := request(t, "GET", inst.url+"/metrics", "", ""); code != http.StatusNotFound {
		t.Errorf("GET /metrics on the API address = %d, want 404", code)
	}
	resp, err := http.Get("http://" + inst.listener(t, "metrics") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /metrics on the metrics address = %d", resp.StatusCode)
	}
}

// Oversized headers are answered in the API's JSON error form.
func TestOversizedHeadersAnsweredInJSON(t *testing.T) {
	isolateEnv(t)
	inst := start(t, "--data-dir", t.TempDir())
	defer inst.stop()
	req, err := http.NewRequestWithContext(t.Context(), "GET", inst.url+"/v1/models", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Padding", strings.Repeat("a", 40<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge ||
		resp.Header.Get("Content-Type") != "application/json" || body["code"] != "HeadersTooLarge" {
		t.Fatalf("40 KiB of headers = %d %q %v %v", resp.StatusCode, resp.Header.Get("Content-Type"), body, err)
	}
}

// A second stream for a call leaves the session bound to the first with
// the first, and the log says so.
func TestSecondStreamLeavesTheSessionWithTheFirst(t *testing.T) {
	s := startStack(t, t.TempDir())
	defer s.stop()
	enrol := fixture(t, "enrol-s01.wav")
	callID := uuid.NewString()
	reg := s.session("register", s.settings(1, "external"), callID, 10, nil)
	first, _ := s.dial(callID)
	// The server starts a stream's call just after it sends opened: wait
	// for the first call to start, so that the second really comes second.
	s.awaitMetric("earshot_calls_active", 1)
	second, _ := s.dial(callID)
	second.send(enrol[:8000*4], 1600)
	if _, rs := s.rest("GET", "/v1/register_session/"+reg, nil); rs["state"] != "PROCESSING_AUDIO" ||
		rs["result"] != nil && rs["result"].(map[string]any)["audio_seconds"].(float64) != 0 {
		t.Fatalf("the second stream fed the session: %v", rs)
	}
	first.send(enrol, 1600)
	if p := disconnectReason(t, first.expect(audiohook.TypeDisconnect, 2, 1)); p.Reason != "completed" {
		t.Fatalf("first stream: disconnect %+v", p)
	}
	first.close("disconnect", 3)
	if rs := s.await("register", reg); rs["state"] != "SUCCESS" {
		t.Fatalf("register session: %v", rs)
	}
	said := slices.ContainsFunc(s.lines(), func(l string) bool {
		return strings.Contains(l, "a second stream for a call: a session bound to the first stays with it")
	})
	if !said {
		t.Error("the second stream was not logged as leaving the session with the first")
	}
}

// awaitMetric polls the server's metrics until name reaches at least min
// (20 s at most), as a monitoring client would.
func (s *stack) awaitMetric(name string, min float64) {
	s.t.Helper()
	url := "http://" + s.listener(s.t, "metrics") + "/metrics"
	deadline := time.Now().Add(20 * time.Second)
	for scrape(s.t, url)[name] < min {
		if time.Now().After(deadline) {
			s.t.Fatalf("%s stayed below %v", name, min)
		}
		time.Sleep(20 * time.Millisecond) // polling a server, as a client does; not a timing assertion
	}
}
