package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(asEarshotEnv) == "1" {
		// A replica process of the cluster tests: this test binary run
		// as the earshot command (see startReplica).
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// isolateEnv hides every EARSHOT_ setting of the environment from an
// in-process serve (flags and the master key), keeping only the test
// database URL, so that a developer's or CI's environment cannot change
// what a test runs.
func isolateEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, envPrefix) && k != "EARSHOT_TEST_DATABASE_URL" {
			t.Setenv(k, "")
		}
	}
}

// configCase is one row of a configuration table test.
type configCase struct {
	name    string
	args    []string
	env     map[string]string
	check   func(t *testing.T, c config)
	wantErr string
}

// runConfigCases parses each case's flags and environment and checks the
// result or the error.
func runConfigCases(t *testing.T, tests []configCase) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig(tt.args, io.Discard, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func TestParseConfig(t *testing.T) {
	runConfigCases(t, []configCase{
		{name: "defaults", check: func(t *testing.T, c config) {
			if c.addr != ":8080" || c.dataDir != "./earshot-data" || c.databaseURL != "" || c.drainTimeout != 30*time.Second ||
				c.sessionTimeout != 10*time.Minute || c.maxAudioTotalDuration != 300 || c.publicURL != "http://localhost:8080" ||
				c.metricsAddr != ":9090" {
				t.Errorf("defaults: %+v", c)
			}
		}},
		{name: "env", env: map[string]string{"EARSHOT_ADDR": "127.0.0.1:9000", "EARSHOT_SESSION_TIMEOUT": "90s",
			"EARSHOT_MAX_AUDIO_TOTAL_DURATION": "60", "EARSHOT_PUBLIC_URL": "https://e.example.com/"},
			check: func(t *testing.T, c config) {
				if c.addr != "127.0.0.1:9000" || c.sessionTimeout != 90*time.Second || c.maxAudioTotalDuration != 60 ||
					c.publicURL != "https://e.example.com" {
					t.Errorf("env: %+v", c)
				}
			}},
		{name: "flag beats env", args: []string{"--addr", ":7000"}, env: map[string]string{"EARSHOT_ADDR": ":9000"},
			check: func(t *testing.T, c config) {
				if c.addr != ":7000" {
					t.Errorf("addr %q", c.addr)
				}
			}},
		{name: "trusted proxies", args: []string{"--trusted-proxies", "10.0.0.0/8, 192.168.1.7,::1"},
			check: func(t *testing.T, c config) {
				want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"), netip.MustParsePrefix("::1/128")}
				if !slices.Equal(c.trustedProxies, want) {
					t.Errorf("proxies %v", c.trustedProxies)
				}
			}},
		{name: "tls public url", args: []string{"--tls-cert", "c.pem", "--tls-key", "k.pem", "--addr", "0.0.0.0:8443"},
			check: func(t *testing.T, c config) {
				if c.publicURL != "https://0.0.0.0:8443" {
					t.Errorf("public url %q", c.publicURL)
				}
			}},
		{name: "bad env duration", env: map[string]string{"EARSHOT_DRAIN_TIMEOUT": "soon"}, wantErr: "EARSHOT_DRAIN_TIMEOUT"},
		{name: "bad flag", args: []string{"--nope"}, wantErr: "not defined"},
		{name: "stray argument", args: []string{"extra"}, wantErr: "unexpected argument"},
		{name: "cert without key", args: []string{"--tls-cert", "c.pem"}, wantErr: "together"},
		{name: "bad log format", args: []string{"--log-format", "xml"}, wantErr: "--log-format"},
		{name: "negative drain", args: []string{"--drain-timeout", "-1s"}, wantErr: "--drain-timeout"},
		{name: "huge max duration", args: []string{"--max-audio-total-duration", "5000"}, wantErr: "--max-audio-total-duration"},
		{name: "bad proxy", args: []string{"--trusted-proxies", "10.0.0.0/33"}, wantErr: "--trusted-proxies"},
	})
}

// instance is an in-process earshot serve.
type instance struct {
	url   string
	lines func() []string
	stop  func() error
}

// listener returns the address the named server (api, metrics, pprof)
// logged it listens on. Servers are logged one after another, and the
// log arrives through a pipe, so it waits for the entry.
func (inst *instance) listener(t *testing.T, name string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, l := range inst.lines() {
			var entry struct{ Msg, Server, Addr string }
			if json.Unmarshal([]byte(l), &entry) == nil && entry.Msg == "listening" && entry.Server == name {
				return entry.Addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s listener logged in:\n%s", name, strings.Join(inst.lines(), "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// start runs earshot serve on a loopback port with JSON logs and waits
// until it listens.
func start(t *testing.T, args ...string) *instance {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var (
		mu    sync.Mutex
		lines []string
	)
	listening := make(chan string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
			var entry struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &entry) == nil && entry.Msg == "listening" {
				select {
				case listening <- entry.Addr: // the first is the API's
				default:
				}
			}
		}
	}()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--log-format", "json"}, args...), io.Discard, pw)
		pw.Close()
		done <- err
	}()
	inst := &instance{
		lines: func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(lines) },
		stop: func() error {
			cancel()
			err := <-done
			<-scanned
			return err
		},
	}
	select {
	case addr := <-listening:
		inst.url = "http://" + addr
	case err := <-done:
		cancel()
		<-scanned
		t.Fatalf("serve ended before listening: %v\n%s", err, strings.Join(inst.lines(), "\n"))
	}
	return inst
}

func request(t *testing.T, method, url, key, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("apikey", key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestRestart runs the service twice on one data dir: credentials and data
// survive, and the second start logs no secret.
func TestRestart(t *testing.T) {
	isolateEnv(t)
	dir := t.TempDir()
	first := start(t, "--data-dir", dir)
	var creds map[string]string
	for _, l := range first.lines() {
		if strings.Contains(l, `"bootstrap credentials"`) {
			if creds != nil {
				t.Fatal("two bootstrap entries")
			}
			json.Unmarshal([]byte(l), &creds)
		}
	}
	if creds["api_key"] == "" || creds["admin_password"] == "" {
		t.Fatalf("no bootstrap entry with credentials in:\n%s", strings.Join(first.lines(), "\n"))
	}
	code, as := request(t, "POST", first.url+"/v1/audio_settings", creds["api_key"],
		`{"audio_protocol":"audiohook","audio_format":"raw","audio_codec":"mulaw","sample_format":"","sample_rate":8000,"channels":1}`)
	if code != http.StatusCreated {
		t.Fatalf("create audio settings = %d %v", code, as)
	}
	if err := first.stop(); err != nil {
		t.Fatalf("first run: %v", err)
	}
	if st, err := os.Stat(filepath.Join(dir, "master.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("master key file: %v", err)
	}

	second := start(t, "--data-dir", dir)
	code, got := request(t, "GET", second.url+"/v1/audio_settings/"+as["id"].(string), creds["api_key"], "")
	if code != http.StatusOK || got["id"] != as["id"] {
		t.Errorf("audio settings after restart = %d %v", code, got)
	}
	if err := second.stop(); err != nil {
		t.Fatalf("second run: %v", err)
	}
	logs := strings.Join(second.lines(), "\n")
	if !strings.Contains(logs, "store already initialised") {
		t.Errorf("second start did not say the store was initialised:\n%s", logs)
	}
	for field, secret := range creds {
		switch field {
		case "level", "ts", "msg", "tenant_id", "admin_user", "oauth_client_id", "credentials_file":
			continue // not secrets
		}
		if strings.Contains(logs, secret) {
			t.Errorf("second start logged %s", field)
		}
	}
}

func TestRunCommands(t *testing.T) {
	var out strings.Builder
	if err := run(t.Context(), []string{"version"}, &out, io.Discard); err != nil || !strings.HasPrefix(out.String(), "earshot ") {
		t.Errorf("version: %q, %v", out.String(), err)
	}
	// earshot --help lists the commands, as earshot help does; serve's
	// own -h lists its flags.
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		var out strings.Builder
		if err := run(t.Context(), args, &out, io.Discard); err != nil || !strings.Contains(out.String(), "replay") || !strings.Contains(out.String(), "eval") {
			t.Errorf("%v: %q, %v; want the list of commands", args, out.String(), err)
		}
	}
	var serveHelp strings.Builder
	if err := run(t.Context(), []string{"serve", "--help"}, io.Discard, &serveHelp); !errors.Is(err, flag.ErrHelp) || !strings.Contains(serveHelp.String(), "-session-timeout") {
		t.Errorf("serve --help: %q, %v; want serve's flags", serveHelp.String(), err)
	}
	if err := run(t.Context(), []string{"frobnicate"}, io.Discard, io.Discard); err == nil {
		t.Error("unknown command succeeded")
	}
	if err := run(t.Context(), []string{"health", "--url", "http://127.0.0.1:1/alive"}, io.Discard, io.Discard); err == nil {
		t.Error("health of nothing succeeded")
	}
	inst := start(t, "--data-dir", t.TempDir())
	defer inst.stop()
	if err := run(t.Context(), []string{"health", "--url", inst.url + "/alive"}, io.Discard, io.Discard); err != nil {
		t.Errorf("health of a running server: %v", err)
	}
}

func TestPprofOnItsOwnAddress(t *testing.T) {
	isolateEnv(t)
	inst := start(t, "--data-dir", t.TempDir(), "--pprof-addr", "127.0.0.1:0")
	defer inst.stop()
	// Not on the public address.
	resp, err := http.Get(inst.url + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("/debug/pprof/ on the API address answered %d", resp.StatusCode)
	}
	resp, err = http.Get("http://" + inst.listener(t, "pprof") + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("goroutine profile answered %d", resp.StatusCode)
	}
}
