package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"sigs.k8s.io/yaml"
)

// loadCompose loads compose.yaml as docker compose does: schema validation,
// interpolation, merge keys, and checks of the references between services,
// networks and volumes.
func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{"compose.yaml"},
		cli.WithWorkingDirectory("."), cli.WithEnv(nil), cli.WithConsistency(true), cli.WithResolvedPaths(true))
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(t.Context())
	if err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return p
}

// The replicas, and the images the other services come from.
var (
	replicas     = []string{"earshot-1", "earshot-2", "earshot-3"}
	otherImages  = map[string]*regexp.Regexp{"postgres": regexp.MustCompile(`^postgres:`), "prometheus": regexp.MustCompile(`^prom/prometheus:`), "grafana": regexp.MustCompile(`^grafana/grafana:`), "lb": regexp.MustCompile(`^(nginx|haproxy):`)}
	metricsPort  = "9464"
	nginxServers = regexp.MustCompile(`(?m)^\s*server\s+([a-z0-9-]+:\d+)`)
)

func TestComposeStack(t *testing.T) {
	p := loadCompose(t)
	if got, want := len(p.Services), len(replicas)+len(otherImages); got != want {
		t.Errorf("%d services, want %d: %v", got, want, p.ServiceNames())
	}
	for name, image := range otherImages {
		s, ok := p.Services[name]
		if !ok || !image.MatchString(s.Image) {
			t.Errorf("service %s: image %q, want one matching %s", name, s.Image, image)
		}
	}

	lb := p.Services["lb"]
	trusted := ""
	for _, n := range lb.Networks {
		if n != nil {
			trusted = n.Ipv4Address
		}
	}
	for _, name := range replicas {
		s, ok := p.Services[name]
		if !ok {
			t.Errorf("no service %s", name)
			continue
		}
		if s.Build == nil || s.Build.Context != mustAbs(t, "..") || s.Build.Dockerfile != "Dockerfile" {
			t.Errorf("%s builds %+v, want the repository's Dockerfile", name, s.Build)
		}
		env := func(k string) string {
			if v := s.Environment[k]; v != nil {
				return *v
			}
			return ""
		}
		if !strings.HasPrefix(env("EARSHOT_DATABASE_URL"), "postgres://") || !strings.Contains(env("EARSHOT_DATABASE_URL"), "@postgres:5432/") {
			t.Errorf("%s: database %q, want the postgres service", name, env("EARSHOT_DATABASE_URL"))
		}
		if env("EARSHOT_METRICS_ADDR") != ":"+metricsPort {
			t.Errorf("%s: metrics on %q, want :%s", name, env("EARSHOT_METRICS_ADDR"), metricsPort)
		}
		if trusted == "" || env("EARSHOT_TRUSTED_PROXIES") != trusted {
			t.Errorf("%s trusts %q, the load balancer is at %q", name, env("EARSHOT_TRUSTED_PROXIES"), trusted)
		}
		if env("EARSHOT_BOOTSTRAP_ALLOW_CIDRS") == "" {
			t.Errorf("%s: no management range", name)
		}
		if !slices.ContainsFunc(s.Volumes, func(v types.ServiceVolumeConfig) bool { return v.Target == "/data" && v.Source == "earshot-data" }) {
			t.Errorf("%s: the shared data volume is not at /data", name)
		}
		// The first replica makes the master key; the others wait for it.
		wantDep, cond := "earshot-1", types.ServiceConditionHealthy
		if name == "earshot-1" {
			wantDep = "postgres"
		}
		if d, ok := s.DependsOn[wantDep]; !ok || d.Condition != cond {
			t.Errorf("%s depends on %v, want %s healthy", name, s.DependsOn, wantDep)
		}
		if d, ok := lb.DependsOn[name]; !ok || d.Condition != cond {
			t.Errorf("the load balancer does not wait for %s to be healthy", name)
		}
	}

	// Files mounted into the containers exist.
	for _, s := range p.Services {
		for _, v := range s.Volumes {
			if v.Type == types.VolumeTypeBind {
				if _, err := os.Stat(v.Source); err != nil {
					t.Errorf("%s mounts %s: %v", s.Name, v.Source, err)
				}
			}
		}
	}
	for _, port := range []string{"8080", "9090", "3000"} {
		found := false
		for _, s := range p.Services {
			for _, pc := range s.Ports {
				found = found || pc.Published == port
			}
		}
		if !found {
			t.Errorf("nothing published on port %s", port)
		}
	}

	// nginx balances over the three replicas' API port.
	conf, err := os.ReadFile("nginx/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	var servers []string
	for _, m := range nginxServers.FindAllStringSubmatch(string(conf), -1) {
		servers = append(servers, m[1])
	}
	if want := []string{"earshot-1:8080", "earshot-2:8080", "earshot-3:8080"}; !slices.Equal(servers, want) {
		t.Errorf("nginx upstream %v, want %v", servers, want)
	}
	for _, directive := range []string{"proxy_set_header Upgrade $http_upgrade;", "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;"} {
		if !strings.Contains(string(conf), directive) {
			t.Errorf("nginx.conf lacks %q", directive)
		}
	}
}

// TestComposePrometheusScrapesReplicas: Prometheus scrapes every replica's
// metrics port under the job name the rules expect.
func TestComposePrometheusScrapesReplicas(t *testing.T) {
	data, err := os.ReadFile("prometheus/prometheus.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Global        map[string]string `json:"global"`
		RuleFiles     []string          `json:"rule_files"`
		ScrapeConfigs []struct {
			JobName       string `json:"job_name"`
			StaticConfigs []struct {
				Targets []string `json:"targets"`
			} `json:"static_configs"`
		} `json:"scrape_configs"`
	}
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		t.Fatal(err)
	}
	var targets []string
	for _, sc := range cfg.ScrapeConfigs {
		if sc.JobName == "earshot" {
			for _, st := range sc.StaticConfigs {
				targets = append(targets, st.Targets...)
			}
		}
	}
	var want []string
	for _, r := range replicas {
		want = append(want, r+":"+metricsPort)
	}
	if !slices.Equal(targets, want) {
		t.Errorf("job earshot scrapes %v, want %v", targets, want)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
