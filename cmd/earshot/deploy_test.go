package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"go.yaml.in/yaml/v3"

	"github.com/earshot-voice/earshot/audiohook"
)

// deployDir holds the dashboard, the Prometheus rules, the compose stack
// and the Kubernetes manifests.
const deployDir = "../../deploy"

// pendingMetrics are queried by the dashboard or the rules but not (yet)
// exported by this tree; each says which work exports it. The test fails
// for a name that is neither exported nor listed here, and for a name
// listed here that the server now exports: delete the entry then.
var pendingMetrics = map[string]string{}

// TestDeployQueriesExportedMetrics checks the monitoring files against a
// running server: it starts one in-process, replays calls into it, provokes
// the failures the dashboard counts (a refused key, a refused AudioHook
// upgrade, a protocol violation, a cancelled session), scrapes /metrics,
// and checks that every metric the dashboard and the rules query is
// exported, and every recorded name they query is recorded. It also parses
// every JSON and YAML file under deploy/ and checks that every alert has
// its runbook section in docs/OPERATIONS.md.
func TestDeployQueriesExportedMetrics(t *testing.T) {
	queries, recorded, alerts := deployQueries(t)
	if len(queries) < 40 || len(alerts) < 8 {
		t.Fatalf("read %d queries and %d alerts from deploy/; the files moved?", len(queries), len(alerts))
	}

	s := startStack(t, t.TempDir(), "--metrics-addr", "127.0.0.1:0") // as deployed: metrics on their own port
	defer s.stop()
	files, err := filepath.Glob("../../testdata/*.wav")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings in testdata/: %v", err)
	}
	var stdout, stderr strings.Builder
	args := append([]string{"replay", "--url", s.url, "--api-key", s.key,
		"--client-secret", base64.StdEncoding.EncodeToString(s.secret), "--calls", "3", "--speed", "4", "--register"}, files...)
	if err := run(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("replay: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	provokeFailures(t, s)

	exported := exportedNames(t, "http://"+s.listener(t, "metrics")+"/metrics")
	for name, why := range pendingMetrics {
		if exported[name] {
			t.Errorf("%s is exported now (%s): delete it from pendingMetrics", name, why)
		}
	}
	for _, q := range queries {
		for _, name := range metricNames(q.expr) {
			switch {
			case strings.Contains(name, ":"):
				if !recorded[name] {
					t.Errorf("%s queries %s, which no recording rule records", q.where, name)
				}
			case name == "up" || exported[name] || pendingMetrics[baseName(name)] != "":
			default:
				t.Errorf("%s queries %s, which the server does not export", q.where, name)
			}
		}
	}

	ops, err := os.ReadFile("../../docs/OPERATIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range alerts {
		if !bytes.Contains(ops, []byte("\n### "+a+"\n")) {
			t.Errorf("docs/OPERATIONS.md has no runbook section \"### %s\"", a)
		}
	}
}

// provokeFailures makes the server count the failures the dashboard shows,
// so that their counters exist in the scrape.
func provokeFailures(t *testing.T, s *stack) {
	t.Helper()
	// A refused API key on the streaming interface.
	if code, _ := request(t, "GET", s.url+"/v1/models", "esk_not-a-key", ""); code != http.StatusUnauthorized {
		t.Errorf("a wrong key answered %d", code)
	}
	// A refused token request.
	resp, err := http.PostForm(s.url+"/auth/realms/default/protocol/openid-connect/token",
		map[string][]string{"grant_type": {"client_credentials"}, "client_id": {"earshot-nobody"}, "client_secret": {"esc_wrong"}})
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// A cancelled session.
	id := s.session("register", s.settings(1, ""), "call-cancelled", 10, nil)
	if code, _ := s.rest("DELETE", "/v1/register_session/"+id, nil); code != http.StatusNoContent {
		t.Errorf("cancel answered %d", code)
	}
	// A refused AudioHook upgrade: the server answers it after a delay,
	// having counted it.
	url := "ws" + strings.TrimPrefix(s.url, "http") + "/v1/audiohook"
	bad, _, err := audiohook.Dial(t.Context(), audiohook.ClientOptions{URL: url, APIKey: "esk_not-a-key", OrganizationID: orgID})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer bad.Drop()
	if m, err := bad.Receive(t.Context()); err != nil || m.Type != "disconnect" {
		t.Errorf("unauthorized upgrade: %+v, %v; want disconnect", m, err)
	}
	// A protocol violation: a skipped sequence number after open.
	cl, _ := s.dial(uuid.NewString())
	cl.c.SkipSeq()
	if _, err := cl.c.Send(t.Context(), "ping", struct{}{}); err != nil {
		t.Fatal(err)
	}
	for m := range cl.msgs {
		if m.Type == "disconnect" {
			break
		}
	}
	cl.c.Drop() // counted; the server need not wait for its close
}

// exportedNames reads the metric families of a Prometheus text exposition:
// each family's name, and the series names a histogram or summary adds.
func exportedNames(t *testing.T, url string) map[string]bool {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 || f[0] != "#" || f[1] != "TYPE" {
			continue
		}
		out[f[2]] = true
		switch f[3] {
		case "histogram":
			out[f[2]+"_bucket"], out[f[2]+"_sum"], out[f[2]+"_count"] = true, true, true
		case "summary":
			out[f[2]+"_sum"], out[f[2]+"_count"] = true, true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("scraped only %d metric names", len(out))
	}
	return out
}

// baseName strips the series suffixes of a histogram.
func baseName(name string) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if b, ok := strings.CutSuffix(name, suffix); ok {
			return b
		}
	}
	return name
}

var (
	// promString is a PromQL string literal: label values are not names.
	promString = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	// promIdent is a PromQL identifier (metric, label, function or
	// recorded name).
	promIdent = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
)

// metricNames returns the metric names an expression queries: identifiers
// of Earshot's and the Go client's families, recorded names (with a
// colon), and up. Labels, functions and keywords are none of those.
func metricNames(expr string) []string {
	var out []string
	for _, id := range promIdent.FindAllString(promString.ReplaceAllString(expr, `""`), -1) {
		if strings.HasPrefix(id, "earshot_") || strings.HasPrefix(id, "process_") || strings.HasPrefix(id, "go_") ||
			strings.Contains(id, ":") || id == "up" {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

func TestMetricNames(t *testing.T) {
	tests := []struct {
		expr string
		want []string
	}{
		{`sum by (reason) (rate(earshot_frames_dropped_total{reason!="queue_full"}[5m]))`, []string{"earshot_frames_dropped_total"}},
		{`rate(process_cpu_seconds_total[1m]) and on (job, instance) earshot_build_info`, []string{"process_cpu_seconds_total", "earshot_build_info"}},
		{`1000 * instance:x:rate1m / on (job, instance) (earshot_calls_active > 0)`, []string{"instance:x:rate1m", "earshot_calls_active"}},
		{`up{job="earshot_like_a_name"} == 0`, []string{"up"}},
		{`label_values(earshot_build_info, instance)`, []string{"earshot_build_info"}},
		{`sum(rate(x[$__rate_interval]))`, nil},
	}
	for _, tt := range tests {
		if got := metricNames(tt.expr); !slices.Equal(got, tt.want) {
			t.Errorf("metricNames(%q) = %q, want %q", tt.expr, got, tt.want)
		}
	}
}

// query is one PromQL expression of the deploy files and where it is.
type query struct{ where, expr string }

// ruleFile is the part of a Prometheus rule file the test reads.
type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Record string `yaml:"record"`
			Alert  string `yaml:"alert"`
			Expr   string `yaml:"expr"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// deployQueries parses every JSON and YAML file under deploy/ (failing on
// any that does not parse) and returns the PromQL of the rule files and
// dashboards, the names the rules record, and the alerts.
func deployQueries(t *testing.T) (queries []query, recorded map[string]bool, alerts []string) {
	t.Helper()
	recorded = map[string]bool{}
	var yamlFiles, jsonFiles int
	err := filepath.WalkDir(deployDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(deployDir, path)
		switch filepath.Ext(path) {
		case ".json":
			jsonFiles++
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				t.Errorf("%s: %v", rel, err)
				return nil
			}
			collectJSONQueries(rel, v, &queries)
		case ".yaml", ".yml":
			yamlFiles++
			dec := yaml.NewDecoder(bytes.NewReader(data))
			for doc := 0; ; doc++ {
				var v any
				if err := dec.Decode(&v); errors.Is(err, io.EOF) {
					break
				} else if err != nil {
					t.Errorf("%s: document %d: %v", rel, doc, err)
					return nil
				}
			}
			if !bytes.Contains(data, []byte("\ngroups:")) {
				return nil
			}
			var rf ruleFile
			if err := yaml.Unmarshal(data, &rf); err != nil {
				t.Errorf("%s: %v", rel, err)
				return nil
			}
			for _, g := range rf.Groups {
				for _, r := range g.Rules {
					name := r.Record + r.Alert
					queries = append(queries, query{rel + ": " + name, r.Expr})
					if r.Record != "" {
						recorded[r.Record] = true
					}
					if r.Alert != "" && !slices.Contains(alerts, r.Alert) {
						alerts = append(alerts, r.Alert)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if yamlFiles == 0 || jsonFiles == 0 {
		t.Fatalf("deploy/ holds %d YAML and %d JSON files", yamlFiles, jsonFiles)
	}
	return queries, recorded, alerts
}

// collectJSONQueries walks a Grafana dashboard and collects the PromQL of
// its targets ("expr") and template variables ("query", "definition").
func collectJSONQueries(where string, v any, out *[]query) {
	switch v := v.(type) {
	case map[string]any:
		if title, ok := v["title"].(string); ok {
			where += ": " + title
		}
		for k, e := range v {
			if s, ok := e.(string); ok && (k == "expr" || k == "definition" || k == "query" && v["refId"] != nil) {
				*out = append(*out, query{where, s})
			}
			collectJSONQueries(where, e, out)
		}
	case []any:
		for _, e := range v {
			collectJSONQueries(where, e, out)
		}
	}
}
