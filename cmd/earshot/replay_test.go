package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestReplayRegistersEverySession: earshot replay runs 20 calls of recorded speech (testdata/) with
// --register against an in-process earshot serve; every call's register
// session reaches SUCCESS, and neither side saw a protocol error (the
// replay's summary counts none, the server's metrics count no violation
// and no dropped frame).
func TestReplayRegistersEverySession(t *testing.T) {
	isolateEnv(t)
	files, err := filepath.Glob("../../testdata/*.wav")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings in testdata/: %v", err)
	}
	inst := start(t, "--data-dir", t.TempDir())
	defer inst.stop()
	key, secret := replayCredentials(t, inst)

	summaryFile := filepath.Join(t.TempDir(), "summary.json")
	profileFile := filepath.Join(t.TempDir(), "replay.pprof")
	var stdout, stderr strings.Builder
	args := append([]string{"replay", "--url", inst.url, "--api-key", key, "--client-secret", secret,
		"--calls", "20", "--speed", "2", "--register", "--server-metrics", "http://" + inst.listener(t, "metrics") + "/metrics", "--json", summaryFile,
		"--cpu-profile", profileFile}, files...)
	if err := run(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("replay: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	data, err := os.ReadFile(summaryFile)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Calls struct {
			Total, Completed, Disconnected, Failed int
		}
		Sessions struct {
			ByState map[string]int `json:"by_state"`
		}
		Frames struct {
			Sent int
		}
		Errors struct {
			Total  int
			ByKind map[string]int `json:"by_kind"`
		}
		Generator *struct {
			MSPerCallSecond float64 `json:"cpu_ms_per_call_second"`
		}
		Server *struct {
			FramesReceived int     `json:"frames_received"`
			FramesDropped  int     `json:"frames_dropped"`
			RSSBeforeMiB   float64 `json:"rss_before_mib"`
			ScrapeErrors   int     `json:"scrape_errors"`
		}
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + stdout.String())
	if s.Calls.Total != 20 || s.Calls.Completed+s.Calls.Disconnected != 20 || s.Calls.Failed != 0 ||
		s.Sessions.ByState["SUCCESS"] != 20 || s.Errors.Total != 0 {
		t.Error("not every call completed and reached SUCCESS without errors (summary above)")
	}

	// The server's side: no protocol violation, no frame dropped, and
	// every frame the replay sent received.
	metrics := scrape(t, "http://"+inst.listener(t, "metrics")+"/metrics")
	for name, v := range metrics {
		if strings.HasPrefix(name, "earshot_audiohook_protocol_violations_total") || strings.HasPrefix(name, "earshot_frames_dropped_total") {
			if v != 0 {
				t.Errorf("server metric %s = %v", name, v)
			}
		}
	}
	if got := metrics["earshot_audiohook_frames_received_total"]; int(got) != s.Frames.Sent {
		t.Errorf("the server received %v frames, the replay sent %d", got, s.Frames.Sent)
	}
	// The replay's own reading of the same endpoint (--server-metrics)
	// agrees, and it measured itself.
	if s.Server == nil || s.Server.FramesReceived != s.Frames.Sent || s.Server.FramesDropped != 0 ||
		s.Server.RSSBeforeMiB <= 0 || s.Server.ScrapeErrors != 0 {
		t.Errorf("server section %+v, want %d frames received, none dropped", s.Server, s.Frames.Sent)
	}
	if s.Generator == nil || s.Generator.MSPerCallSecond <= 0 {
		t.Errorf("generator section %+v", s.Generator)
	}
	// --cpu-profile wrote a profile: pprof's gzipped protocol buffer.
	if p, err := os.ReadFile(profileFile); err != nil || len(p) < 2 || p[0] != 0x1f || p[1] != 0x8b {
		t.Errorf("--cpu-profile wrote %d bytes (%v), want a gzipped profile", len(p), err)
	}
}

// replayCredentials reads the API key and AudioHook client secret from the
// bootstrap log entry.
func replayCredentials(t *testing.T, inst *instance) (key, secret string) {
	t.Helper()
	for _, l := range inst.lines() {
		if strings.Contains(l, `"bootstrap credentials"`) {
			var creds map[string]string
			json.Unmarshal([]byte(l), &creds)
			return creds["api_key"], creds["audiohook_client_secret"]
		}
	}
	t.Fatal("no bootstrap credentials logged")
	return "", ""
}

// scrape reads a Prometheus text exposition into series → value.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}

func TestReadCallIDs(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string
		wantErr       bool
	}{
		{name: "one per line", content: "a\nb\n", want: []string{"a", "b"}},
		{name: "blanks, comments and spaces", content: "# calls of the morning\n\n  a  \r\n#b\nc", want: []string{"a", "c"}},
		{name: "empty", content: "", want: nil},
		{name: "too large", content: strings.Repeat("x", maxCallIDFile+1), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "ids")
			if err := os.WriteFile(file, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := readCallIDs(file)
			if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
				t.Errorf("readCallIDs = %q, %v; want %q (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
	if _, err := readCallIDs(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file read")
	}
}
