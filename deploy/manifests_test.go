package deploy

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// Per-call cost measured in docs/PERFORMANCE.md (2,000 real-time calls, each
// with a register session): CPU per second of call audio, and resident
// memory per call. The requests must hold the HPA's target of calls per pod
// at these figures.
const (
	cpuPerCall    = 0.0006    // cores (0.6 ms of CPU per call-second)
	memoryPerCall = 330 << 10 // bytes
)

// manifests is every object of kubernetes/, decoded strictly.
type manifests struct {
	deployment  *appsv1.Deployment
	service     *corev1.Service
	pdb         *policyv1.PodDisruptionBudget
	hpa         *autoscalingv2.HorizontalPodAutoscaler
	netpol      *networkingv1.NetworkPolicy
	secret      *corev1.Secret
	monitor     *monitoringv1.ServiceMonitor
	rule        *monitoringv1.PrometheusRule
	files       map[string]string // kind → file
	objectCount int
}

// documents splits a YAML stream into its documents.
func documents(data []byte) [][]byte {
	var out [][]byte
	for _, doc := range bytes.Split(append([]byte("\n"), data...), []byte("\n---")) {
		if len(bytes.TrimSpace(stripComments(doc))) > 0 {
			out = append(out, doc)
		}
	}
	return out
}

func stripComments(doc []byte) []byte {
	var out []byte
	for line := range bytes.Lines(doc) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line...)
		}
	}
	return out
}

// decodeStrict decodes one YAML document into obj: unknown or duplicate
// fields are errors, and so is an apiVersion or kind other than want's.
func decodeStrict(doc []byte, obj any, apiVersion, kind string) error {
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return err
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	if tm.APIVersion != apiVersion || tm.Kind != kind {
		return fmt.Errorf("%s %s, want %s %s", tm.APIVersion, tm.Kind, apiVersion, kind)
	}
	return nil
}

// decode decodes one document by its kind into m.
func (m *manifests) decode(doc []byte) (string, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return "", err
	}
	var obj any
	var apiVersion string
	switch tm.Kind {
	case "Deployment":
		m.deployment, apiVersion = &appsv1.Deployment{}, "apps/v1"
		obj = m.deployment
	case "Service":
		m.service, apiVersion = &corev1.Service{}, "v1"
		obj = m.service
	case "PodDisruptionBudget":
		m.pdb, apiVersion = &policyv1.PodDisruptionBudget{}, "policy/v1"
		obj = m.pdb
	case "HorizontalPodAutoscaler":
		m.hpa, apiVersion = &autoscalingv2.HorizontalPodAutoscaler{}, "autoscaling/v2"
		obj = m.hpa
	case "NetworkPolicy":
		m.netpol, apiVersion = &networkingv1.NetworkPolicy{}, "networking.k8s.io/v1"
		obj = m.netpol
	case "Secret":
		m.secret, apiVersion = &corev1.Secret{}, "v1"
		obj = m.secret
	case "ServiceMonitor":
		m.monitor, apiVersion = &monitoringv1.ServiceMonitor{}, "monitoring.coreos.com/v1"
		obj = m.monitor
	case "PrometheusRule":
		m.rule, apiVersion = &monitoringv1.PrometheusRule{}, "monitoring.coreos.com/v1"
		obj = m.rule
	default:
		return "", fmt.Errorf("unexpected kind %q (apiVersion %q)", tm.Kind, tm.APIVersion)
	}
	if _, dup := m.files[tm.Kind]; dup {
		return "", fmt.Errorf("a second %s", tm.Kind)
	}
	return tm.Kind, decodeStrict(doc, obj, apiVersion, tm.Kind)
}

func loadManifests(t *testing.T) *manifests {
	t.Helper()
	paths, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	m := &manifests{files: map[string]string{}}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range documents(data) {
			kind, err := m.decode(doc)
			if err != nil {
				t.Fatalf("%s, document %d: %v", p, i, err)
			}
			m.files[kind] = p
			m.objectCount++
		}
	}
	for _, kind := range []string{"Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler",
		"NetworkPolicy", "Secret", "ServiceMonitor", "PrometheusRule"} {
		if m.files[kind] == "" {
			t.Errorf("no %s in kubernetes/", kind)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return m
}

// TestStrictDecoding proves the decoding strict: the Deployment with one
// misspelt field, or with a field of another type, does not decode.
func TestStrictDecoding(t *testing.T) {
	data, err := os.ReadFile("kubernetes/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, from, to string }{
		{"unknown field", "  replicas: 3\n", "  replica: 3\n"},
		{"unknown nested field", "      terminationGracePeriodSeconds:", "      terminationGracePeriod:"},
		{"wrong type", "  replicas: 3\n", "  replicas: three\n"},
		{"duplicate field", "  replicas: 3\n", "  replicas: 3\n  replicas: 4\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !bytes.Contains(data, []byte(tt.from)) {
				t.Fatalf("deployment.yaml lacks %q", tt.from)
			}
			bad := bytes.Replace(data, []byte(tt.from), []byte(tt.to), 1)
			if err := decodeStrict(bad, &appsv1.Deployment{}, "apps/v1", "Deployment"); err == nil {
				t.Error("decoded")
			}
		})
	}
	if err := decodeStrict(data, &appsv1.Deployment{}, "apps/v1", "Deployment"); err != nil {
		t.Errorf("the file itself: %v", err)
	}
	monitor := []byte("apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nspec:\n  endpoints:\n    - port: metrics\n      scrapeEvery: 15s\n")
	if err := decodeStrict(monitor, &monitoringv1.ServiceMonitor{}, "monitoring.coreos.com/v1", "ServiceMonitor"); err == nil {
		t.Error("a ServiceMonitor with an unknown field decoded")
	}
}

func envOf(c corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

// portOf returns the number of a named container port.
func portOf(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

func selects(t *testing.T, what string, sel *metav1.LabelSelector, set map[string]string) {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if s.Empty() || !s.Matches(labels.Set(set)) {
		t.Errorf("%s selects %v, which does not match %v", what, sel, set)
	}
}

func TestDeployment(t *testing.T) {
	m := loadManifests(t)
	d := m.deployment
	pod := d.Spec.Template
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]

	// Probes on the health endpoints.
	probes := []struct {
		name string
		p    *corev1.Probe
		path string
	}{{"readiness", c.ReadinessProbe, "/ready"}, {"liveness", c.LivenessProbe, "/alive"}}
	for _, p := range probes {
		if p.p == nil || p.p.HTTPGet == nil || p.p.HTTPGet.Path != p.path || p.p.HTTPGet.Port != intstr.FromString("http") {
			t.Errorf("%s probe %+v, want GET %s on port http", p.name, p.p, p.path)
		}
	}
	if portOf(c, "http") != 8080 {
		t.Errorf("http port %d, want 8080 (EARSHOT_ADDR)", portOf(c, "http"))
	}
	if addr, _ := envOf(c, "EARSHOT_ADDR"); addr != ":8080" {
		t.Errorf("EARSHOT_ADDR %q", addr)
	}

	// Metrics on their own port, the one the Service and monitor use.
	addr, _ := envOf(c, "EARSHOT_METRICS_ADDR")
	if want := ":" + strconv.Itoa(int(portOf(c, "metrics"))); addr != want || addr == ":0" {
		t.Errorf("EARSHOT_METRICS_ADDR %q, container port metrics %s", addr, want)
	}

	// preStop, then the drain, within the grace period.
	drain, err := time.ParseDuration(mustEnv(t, c, "EARSHOT_DRAIN_TIMEOUT"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
		t.Fatal("no preStop sleep: the pod would get SIGTERM while still in the endpoints")
	}
	preStop := time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	grace := time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	if grace <= preStop+drain {
		t.Errorf("terminationGracePeriodSeconds %v, want more than preStop %v + drain timeout %v", grace, preStop, drain)
	}

	// The Secret's variables.
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef == nil || c.EnvFrom[0].SecretRef.Name != m.secret.Name {
		t.Errorf("envFrom %+v, want the Secret %s", c.EnvFrom, m.secret.Name)
	}
	for _, k := range []string{"EARSHOT_MASTER_KEY", "EARSHOT_DATABASE_URL"} {
		if m.secret.StringData[k] == "" {
			t.Errorf("Secret lacks %s", k)
		}
	}

	// Hardening.
	sc := c.SecurityContext
	if pod.Spec.SecurityContext == nil || pod.Spec.SecurityContext.RunAsNonRoot == nil || !*pod.Spec.SecurityContext.RunAsNonRoot ||
		sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("want non-root, a read-only root file system and no privilege escalation")
	}
	if !slices.ContainsFunc(c.VolumeMounts, func(v corev1.VolumeMount) bool { return v.MountPath == mustEnv(t, c, "EARSHOT_DATA_DIR") }) {
		t.Error("the data dir is not a mounted volume (the root file system is read-only)")
	}
	if cidrs := mustEnv(t, c, "EARSHOT_BOOTSTRAP_ALLOW_CIDRS"); cidrs == "" {
		t.Error("no management range for the pod network")
	}

	// Resources sized from the per-call cost, for the HPA's target.
	target := m.hpa.Spec.Metrics[0].Pods.Target.AverageValue.AsApproximateFloat64()
	req := c.Resources.Requests
	if got, want := req.Cpu().AsApproximateFloat64(), target*cpuPerCall; got < want {
		t.Errorf("CPU request %v cores, below %v calls x %v", got, target, cpuPerCall)
	}
	if got, want := req.Memory().AsApproximateFloat64(), target*memoryPerCall; got < want {
		t.Errorf("memory request %v bytes, below %v calls x %d", got, target, memoryPerCall)
	}
	if _, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		t.Error("a CPU limit throttles calls into dropping frames")
	}
	limit := c.Resources.Limits.Memory()
	gomem, err := resource.ParseQuantity(strings.TrimSuffix(mustEnv(t, c, "GOMEMLIMIT"), "B"))
	if err != nil {
		t.Fatal(err)
	}
	if limit.IsZero() || gomem.Cmp(*limit) >= 0 || gomem.Cmp(*req.Memory()) <= 0 {
		t.Errorf("GOMEMLIMIT %v, want between the memory request %v and the limit %v", &gomem, req.Memory(), limit)
	}
}

func mustEnv(t *testing.T, c corev1.Container, name string) string {
	t.Helper()
	v, ok := envOf(c, name)
	if !ok {
		t.Fatalf("no %s in the container's environment", name)
	}
	return v
}

// TestObjectsFitTogether checks the references between the objects:
// selectors, ports, names.
func TestObjectsFitTogether(t *testing.T) {
	m := loadManifests(t)
	podLabels := m.deployment.Spec.Template.Labels
	c := m.deployment.Spec.Template.Spec.Containers[0]
	selects(t, "the Deployment", m.deployment.Spec.Selector, podLabels)
	selects(t, "the Service", &metav1.LabelSelector{MatchLabels: m.service.Spec.Selector}, podLabels)
	selects(t, "the PodDisruptionBudget", m.pdb.Spec.Selector, podLabels)
	selects(t, "the NetworkPolicy", &m.netpol.Spec.PodSelector, podLabels)
	selects(t, "the ServiceMonitor", &m.monitor.Spec.Selector, m.service.Labels)

	servicePorts := map[string]corev1.ServicePort{}
	for _, p := range m.service.Spec.Ports {
		servicePorts[p.Name] = p
		if p.TargetPort.Type != intstr.String || portOf(c, p.TargetPort.StrVal) == 0 {
			t.Errorf("Service port %s targets %v, not a named container port", p.Name, p.TargetPort)
		}
	}
	if len(m.monitor.Spec.Endpoints) != 1 {
		t.Fatalf("ServiceMonitor endpoints %+v", m.monitor.Spec.Endpoints)
	}
	ep := m.monitor.Spec.Endpoints[0]
	if sp, ok := servicePorts[ep.Port]; !ok || ep.Port != "metrics" || sp.TargetPort.StrVal != "metrics" || ep.Path != "/metrics" {
		t.Errorf("ServiceMonitor scrapes port %q path %q, want the Service's metrics port", ep.Port, ep.Path)
	}
	// The job label is the Service's name; the replica-down alert selects job="earshot".
	if m.service.Name != "earshot" || m.monitor.Spec.JobLabel != "" {
		t.Errorf("Service %q, jobLabel %q: the job would not be earshot", m.service.Name, m.monitor.Spec.JobLabel)
	}

	if ref := m.hpa.Spec.ScaleTargetRef; ref.Kind != "Deployment" || ref.Name != m.deployment.Name || ref.APIVersion != "apps/v1" {
		t.Errorf("HPA scales %+v", ref)
	}
	if ms := m.hpa.Spec.Metrics; len(ms) != 1 || ms[0].Type != autoscalingv2.PodsMetricSourceType || ms[0].Pods.Metric.Name != "earshot_calls_active" ||
		ms[0].Pods.Target.Type != autoscalingv2.AverageValueMetricType {
		t.Errorf("HPA metrics %+v, want the average of earshot_calls_active per pod", ms)
	}
	if minR := m.hpa.Spec.MinReplicas; minR == nil || *minR < 2 || *m.deployment.Spec.Replicas < *minR {
		t.Errorf("HPA minReplicas %v with %d replicas", minR, *m.deployment.Spec.Replicas)
	}
	if mu := m.pdb.Spec.MaxUnavailable; mu == nil || mu.IntValue() != 1 {
		t.Errorf("PDB maxUnavailable %v, want 1", mu)
	}

	// The NetworkPolicy admits the API port and, apart, the metrics port.
	var ports []string
	for _, rule := range m.netpol.Spec.Ingress {
		for _, p := range rule.Ports {
			if p.Port == nil || portOf(c, p.Port.StrVal) == 0 {
				t.Errorf("NetworkPolicy port %v is not a named container port", p.Port)
				continue
			}
			ports = append(ports, p.Port.StrVal)
			if p.Port.StrVal == "metrics" && len(rule.From) == 0 {
				t.Error("the metrics port is open to everyone")
			}
		}
	}
	if !slices.Contains(ports, "http") || !slices.Contains(ports, "metrics") {
		t.Errorf("NetworkPolicy admits %v, want http and metrics", ports)
	}
	if !slices.Contains(m.netpol.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
		t.Error("no egress policy")
	}
}

// TestPrometheusRuleMatchesRuleFile: the PrometheusRule repeats
// prometheus/earshot-rules.yaml exactly.
func TestPrometheusRuleMatchesRuleFile(t *testing.T) {
	m := loadManifests(t)
	data, err := os.ReadFile("prometheus/earshot-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var file monitoringv1.PrometheusRuleSpec
	if err := yaml.UnmarshalStrict(data, &file); err != nil {
		t.Fatalf("prometheus/earshot-rules.yaml: %v", err)
	}
	if len(file.Groups) == 0 || !reflect.DeepEqual(file.Groups, m.rule.Spec.Groups) {
		t.Error("kubernetes/prometheusrule.yaml differs from prometheus/earshot-rules.yaml; regenerate it (its header says how)")
	}
}
