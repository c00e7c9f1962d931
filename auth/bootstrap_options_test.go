package auth

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// recordingStore is a memStore that keeps the records of the first start.
type recordingStore struct {
	*memStore
	initial *InitialRecords
}

func (r *recordingStore) Initialise(ctx context.Context, recs InitialRecords) error {
	if err := r.memStore.Initialise(ctx, recs); err != nil {
		return err
	}
	r.initial = &recs
	return nil
}

func TestBootstrapAllowList(t *testing.T) {
	tests := []struct {
		name  string
		allow []string
		want  []string
	}{
		{name: "default", want: []string{"127.0.0.0/8", "::1/128"}},
		{name: "pod network", allow: []string{"10.244.0.0/16"}, want: []string{"127.0.0.0/8", "::1/128", "10.244.0.0/16"}},
		{name: "masked and deduplicated", allow: []string{"10.1.2.3/8", "10.0.0.0/8", "127.0.0.0/8", "2001:db8::7/32"},
			want: []string{"127.0.0.0/8", "::1/128", "10.0.0.0/8", "2001:db8::/32"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var allow []netip.Prefix
			for _, s := range tt.allow {
				allow = append(allow, netip.MustParsePrefix(s))
			}
			st := &recordingStore{memStore: newMemStore()}
			if _, err := BootstrapWith(t.Context(), st, testKey(1), zap.NewNop(), BootstrapOptions{AllowList: allow}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range st.initial.AllowList {
				if e.Service != ServiceStreaming || e.TenantID != DefaultTenant || e.ID == "" {
					t.Errorf("entry %+v: want an entry of the default tenant's streaming service", e)
				}
				got = append(got, e.Prefix.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("allow list %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBootstrapCredentialsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", CredentialsFileName)
	st, mk := newMemStore(), testKey(1)
	core, logs := observer.New(zapcore.DebugLevel)
	creds, err := BootstrapWith(t.Context(), st, mk, zap.New(core), BootstrapOptions{CredentialsFile: path})
	if err != nil || creds == nil {
		t.Fatalf("first start = %v, %v", creds, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}
	if di, err := os.Stat(filepath.Dir(path)); err != nil || di.Mode().Perm() != 0o700 {
		t.Errorf("created directory: %v, %v; want mode 0700", di, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var inFile Credentials
	if err := json.Unmarshal(data, &inFile); err != nil || inFile != *creds {
		t.Fatalf("file holds %+v (%v), want %+v", inFile, err, *creds)
	}
	entries := logs.FilterMessage("bootstrap credentials").All()
	if len(entries) != 1 || entries[0].Level != zapcore.WarnLevel || entries[0].ContextMap()["credentials_file"] != path {
		t.Fatalf("bootstrap entries %v, want one at warn naming the file", entries)
	}

	// A later start leaves the file alone and says where it is.
	core2, logs2 := observer.New(zapcore.DebugLevel)
	if again, err := BootstrapWith(t.Context(), st, mk, zap.New(core2), BootstrapOptions{CredentialsFile: path}); err != nil || again != nil {
		t.Fatalf("second start = %v, %v", again, err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(data) {
		t.Error("a later start changed the file")
	}
	if e := logs2.FilterMessage("store already initialised; no credentials are printed").All(); len(e) != 1 || e[0].ContextMap()["credentials_file"] != path {
		t.Errorf("later start logged %v, want the file named", logs2.All())
	}
}

// TestBootstrapCredentialsFileExists: a file left by an earlier store is
// never overwritten; the start still succeeds and logs the credentials.
func TestBootstrapCredentialsFileExists(t *testing.T) {
	path := filepath.Join(t.TempDir(), CredentialsFileName)
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	creds, err := BootstrapWith(t.Context(), newMemStore(), testKey(1), zap.New(core), BootstrapOptions{CredentialsFile: path})
	if err != nil || creds == nil {
		t.Fatalf("first start = %v, %v", creds, err)
	}
	if data, _ := os.ReadFile(path); string(data) != "old" {
		t.Errorf("file overwritten: %q", data)
	}
	if logs.FilterLevelExact(zapcore.ErrorLevel).Len() != 1 {
		t.Errorf("want one error entry about the file, got %v", logs.All())
	}
	e := logs.FilterMessage("bootstrap credentials").All()
	if len(e) != 1 || e[0].ContextMap()["api_key"] != creds.APIKey {
		t.Errorf("bootstrap entry %v", e)
	}
	if _, ok := e[0].ContextMap()["credentials_file"]; ok {
		t.Error("the entry names a file it did not write")
	}
	if err := WriteCredentialsFile(path, creds); !errors.Is(err, os.ErrExist) {
		t.Errorf("WriteCredentialsFile over a file = %v, want os.ErrExist", err)
	}
}
