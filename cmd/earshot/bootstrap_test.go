package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshot-voice/earshot/auth"
)

func TestParseBootstrapAllow(t *testing.T) {
	runConfigCases(t, []configCase{
		{name: "default", check: func(t *testing.T, c config) {
			if len(c.bootstrapAllow) != 0 {
				t.Errorf("default allow %v, want none", c.bootstrapAllow)
			}
		}},
		{name: "flag", args: []string{"--bootstrap-allow-cidrs", "10.244.0.0/16, 10.1.2.3,fd00::/8"}, check: func(t *testing.T, c config) {
			want := []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16"), netip.MustParsePrefix("10.1.2.3/32"), netip.MustParsePrefix("fd00::/8")}
			if !slices.Equal(c.bootstrapAllow, want) {
				t.Errorf("allow %v, want %v", c.bootstrapAllow, want)
			}
		}},
		{name: "env", env: map[string]string{"EARSHOT_BOOTSTRAP_ALLOW_CIDRS": "172.16.0.0/12"}, check: func(t *testing.T, c config) {
			if !slices.Equal(c.bootstrapAllow, []netip.Prefix{netip.MustParsePrefix("172.16.0.0/12")}) {
				t.Errorf("allow %v", c.bootstrapAllow)
			}
		}},
		{name: "bad prefix", args: []string{"--bootstrap-allow-cidrs", "10.0.0.0/40"}, wantErr: "--bootstrap-allow-cidrs"},
		{name: "not an address", env: map[string]string{"EARSHOT_BOOTSTRAP_ALLOW_CIDRS": "pods"}, wantErr: "--bootstrap-allow-cidrs"},
		{name: "too many", args: []string{"--bootstrap-allow-cidrs", strings.Repeat("10.0.0.0/8,", maxBootstrapAllow) + "10.0.0.0/8"},
			wantErr: "at most"},
	})
}

// startQuiet runs earshot serve on a loopback port chosen beforehand (a
// quiet log level does not say where it listens) and waits until /alive
// answers.
func startQuiet(t *testing.T, args ...string) *instance {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var (
		mu    sync.Mutex
		lines []string
	)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
		}
	}()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, append([]string{"serve", "--addr", addr, "--log-format", "json"}, args...), io.Discard, pw)
		pw.Close()
		done <- err
	}()
	inst := &instance{
		url:   "http://" + addr,
		lines: func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(lines) },
		stop: func() error {
			cancel()
			err := <-done
			<-scanned
			return err
		},
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(inst.url + "/alive")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent {
				return inst
			}
		}
		select {
		case err := <-done:
			cancel()
			<-scanned
			t.Fatalf("serve ended before answering: %v\n%s", err, strings.Join(inst.lines(), "\n"))
		default:
		}
		if time.Now().After(deadline) {
			inst.stop()
			t.Fatalf("serve did not answer /alive in time:\n%s", strings.Join(inst.lines(), "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// managementFrom calls a management endpoint as if from client (through
// the loopback proxy the server trusts) and returns the status and the
// body.
func managementFrom(t *testing.T, url, client, header, value string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(header, value)
	req.Header.Set("X-Forwarded-For", client)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestFirstStartForContainers is a first start as a container platform
// makes it: the log level is error, and the management allow list is
// seeded with the platform's network. The credentials are logged once (at
// warn, whatever the level) and left in a 0600 file in the data dir;
// management answers requests from the seeded range and refuses others;
// a later start leaves the file alone and says where it is.
func TestFirstStartForContainers(t *testing.T) {
	isolateEnv(t)
	dir := t.TempDir()
	first := startQuiet(t, "--data-dir", dir, "--log-level", "error",
		"--bootstrap-allow-cidrs", "10.20.0.0/16", "--trusted-proxies", "127.0.0.1")

	var entries []map[string]string
	for _, l := range first.lines() {
		var e map[string]string
		if json.Unmarshal([]byte(l), &e) == nil && e["msg"] == "bootstrap credentials" {
			entries = append(entries, e)
		}
	}
	if len(entries) != 1 || entries[0]["level"] != "warn" {
		t.Fatalf("want one bootstrap entry at warn, got %v in:\n%s", entries, strings.Join(first.lines(), "\n"))
	}
	logged := entries[0]
	path := filepath.Join(dir, auth.CredentialsFileName)
	if logged["credentials_file"] != path {
		t.Errorf("the entry names file %q, want %q", logged["credentials_file"], path)
	}
	for _, l := range first.lines() {
		if strings.Contains(l, `"level":"info"`) {
			t.Errorf("--log-level error logged at info: %s", l)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("credentials file mode %v, want 0600", fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var inFile map[string]string
	if err := json.Unmarshal(data, &inFile); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"tenant_id", "admin_user", "admin_password", "admin_token", "oauth_client_id",
		"oauth_client_secret", "api_key", "audiohook_client_secret"} {
		if inFile[f] == "" || inFile[f] != logged[f] {
			t.Errorf("file's %s = %q, the log entry's %q", f, inFile[f], logged[f])
		}
	}

	// Management from the seeded range, with the file's credentials.
	allow := first.url + "/management/v1/ip_allowlist"
	for _, tt := range []struct {
		name, client, header, value string
		want                        int
	}{
		{"api key from the seeded range", "10.20.3.4", "apikey", inFile["api_key"], http.StatusOK},
		{"admin token from the seeded range", "10.20.255.1", "Authorization", "Bearer " + inFile["admin_token"], http.StatusOK},
		{"api key from elsewhere", "10.21.0.1", "apikey", inFile["api_key"], http.StatusForbidden},
		{"admin token from elsewhere", "192.0.2.1", "Authorization", "Bearer " + inFile["admin_token"], http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := managementFrom(t, allow, tt.client, tt.header, tt.value)
			if code != tt.want {
				t.Fatalf("GET ip_allowlist from %s = %d %s, want %d", tt.client, code, body, tt.want)
			}
			if code == http.StatusOK && !strings.Contains(body, `"10.20.0.0/16"`) {
				t.Errorf("allow list lacks the seeded range: %s", body)
			}
			if code == http.StatusForbidden && !strings.Contains(body, "IPNotAllowed") {
				t.Errorf("refusal %s, want IPNotAllowed", body)
			}
		})
	}
	if err := first.stop(); err != nil {
		t.Fatalf("first run: %v", err)
	}

	// A later start, at info level: the file is untouched and named.
	second := start(t, "--data-dir", dir)
	if err := second.stop(); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(data) {
		t.Error("a later start changed the credentials file")
	}
	found := false
	for _, l := range second.lines() {
		var e map[string]string
		if json.Unmarshal([]byte(l), &e) == nil && e["msg"] == "store already initialised; no credentials are printed" {
			found = e["credentials_file"] == path
		}
	}
	if !found {
		t.Errorf("the later start did not name the credentials file:\n%s", strings.Join(second.lines(), "\n"))
	}
}
