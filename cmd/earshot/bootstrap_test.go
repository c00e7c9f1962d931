package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

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
	inst, done := launch(t, args...)
	waitAlive(t, inst, done)
	return inst
}

// launch starts earshot serve on a loopback port chosen beforehand and
// returns at once; done receives what serve returned, unless stop took it.
func launch(t *testing.T, args ...string) (*instance, chan error) {
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
		err := run(ctx, append([]string{"serve", "--addr", addr, "--metrics-addr", "127.0.0.1:0", "--log-format", "json"}, args...), io.Discard, pw)
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
	return inst, done
}

// waitAlive polls /alive until it answers 204; it fails the test when
// serve ends first or does not answer in 30 s.
func waitAlive(t *testing.T, inst *instance, done chan error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(inst.url + "/alive")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent {
				return
			}
		}
		select {
		case err := <-done:
			done <- err // for stop
			inst.stop()
			t.Fatalf("serve ended before answering: %v\n%s", err, strings.Join(inst.lines(), "\n"))
		default:
		}
		if time.Now().After(deadline) {
			inst.stop()
			t.Fatalf("serve did not answer /alive in time:\n%s", strings.Join(inst.lines(), "\n"))
		}
		time.Sleep(20 * time.Millisecond) // polling a server that is starting; not a timing assertion
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

// postgresSchema creates an empty schema in the test database and returns a
// database URL whose search_path is that schema; the schema is dropped
// after the test. It skips the test when EARSHOT_TEST_DATABASE_URL is unset.
func postgresSchema(t *testing.T) string {
	t.Helper()
	base := os.Getenv("EARSHOT_TEST_DATABASE_URL")
	if base == "" {
		t.Skip("EARSHOT_TEST_DATABASE_URL is not set; skipping the PostgreSQL test")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("EARSHOT_TEST_DATABASE_URL is set but PostgreSQL is unreachable: %v", err)
	}
	defer conn.Close(context.Background())
	schema := "earshot_test_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("creating schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// TestReplicasOnPostgreSQLWriteOneCredentialsFile starts two replicas at
// once on one empty PostgreSQL store, each with its own data dir: exactly
// one initialises the store, and only it logs the credentials and writes
// the file; the seeded allow list admits management on both.
func TestReplicasOnPostgreSQLWriteOneCredentialsFile(t *testing.T) {
	isolateEnv(t)
	databaseURL := postgresSchema(t)
	t.Setenv(masterKeyEnv, base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))
	dirs := []string{t.TempDir(), t.TempDir()}
	var replicas []*instance
	var dones []chan error
	for _, dir := range dirs {
		inst, done := launch(t, "--data-dir", dir, "--database-url", databaseURL,
			"--bootstrap-allow-cidrs", "10.30.0.0/16", "--trusted-proxies", "127.0.0.1")
		replicas, dones = append(replicas, inst), append(dones, done)
	}
	for i, inst := range replicas {
		waitAlive(t, inst, dones[i])
		defer inst.stop()
	}

	var creds map[string]string
	written := -1
	for i, inst := range replicas {
		path := filepath.Join(dirs[i], auth.CredentialsFileName)
		_, statErr := os.Stat(path)
		var entry map[string]string
		for _, l := range inst.lines() {
			var e map[string]string
			if json.Unmarshal([]byte(l), &e) == nil && e["msg"] == "bootstrap credentials" {
				entry = e
			}
		}
		switch {
		case entry != nil && statErr == nil && entry["credentials_file"] == path:
			if written >= 0 {
				t.Fatal("both replicas initialised the store")
			}
			written, creds = i, entry
		case entry == nil && errors.Is(statErr, fs.ErrNotExist):
		default:
			t.Fatalf("replica %d: bootstrap entry %v, file %v: want both or neither", i, entry, statErr)
		}
	}
	if written < 0 {
		t.Fatal("no replica wrote the credentials")
	}
	for i, inst := range replicas {
		code, body := managementFrom(t, inst.url+"/management/v1/ip_allowlist", "10.30.1.2", "apikey", creds["api_key"])
		if code != http.StatusOK || !strings.Contains(body, `"10.30.0.0/16"`) {
			t.Errorf("replica %d: management from the seeded range = %d %s", i, code, body)
		}
	}
}
