package deploy

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

const dashboardFile = "grafana/dashboards/earshot.json"

// decodeDashboard decodes a dashboard strictly with the types of Grafana's
// foundation SDK: unknown fields of the dashboard, of the panels' options
// and of the Prometheus queries are errors, and so are missing required
// fields. (The SDK returns an empty error list as a non-nil error.)
//
//lint:ignore SA1019 the file is a classic (v1) dashboard, the JSON model that file provisioning loads; v2 is another schema
func decodeDashboard(data []byte) (*dashboard.Dashboard, error) {
	plugins.RegisterDefaultPlugins()
	//lint:ignore SA1019 as above
	var d dashboard.Dashboard
	if err := d.UnmarshalJSONStrict(data); err != nil && err.Error() != "" {
		return nil, err
	}
	return &d, nil
}

func TestDashboard(t *testing.T) {
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	d, err := decodeDashboard(data)
	if err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.Uid == nil || *d.Uid != "earshot-overview" {
		t.Errorf("uid %v: the docs and the compose stack link earshot-overview", d.Uid)
	}
	// The SDK accepts any panel type; Grafana would show an unknown one as
	// an error. Every panel's queries go to the dashboard's data source.
	var raw struct {
		Panels []struct {
			Type, Title string
			Datasource  *struct{ UID string }
			Targets     []struct {
				Expr       string
				Datasource *struct{ UID string }
			}
		}
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{"row": true, "stat": true, "timeseries": true, "table": true}
	for _, p := range raw.Panels {
		if !known[p.Type] {
			t.Errorf("panel %q: type %q", p.Title, p.Type)
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: data source %v, %d queries", p.Title, p.Datasource, len(p.Targets))
		}
		for _, q := range p.Targets {
			if q.Expr == "" || q.Datasource == nil || q.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q: query %q on %v", p.Title, q.Expr, q.Datasource)
			}
		}
	}
}

// TestDashboardDecodingIsStrict: misspelt fields fail.
func TestDashboardDecodingIsStrict(t *testing.T) {
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		change func(d map[string]any)
	}{
		{"dashboard field", func(d map[string]any) { d["refreshh"] = "5s" }},
		{"panel option", func(d map[string]any) { panel(d, "stat")["options"].(map[string]any)["colorModee"] = "value" }},
		{"query field", func(d map[string]any) {
			panel(d, "timeseries")["targets"].([]any)[0].(map[string]any)["exprr"] = "up"
		}},
		{"wrong type", func(d map[string]any) { panel(d, "timeseries")["gridPos"].(map[string]any)["h"] = "eight" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d map[string]any
			if err := json.Unmarshal(data, &d); err != nil {
				t.Fatal(err)
			}
			tt.change(d)
			bad, _ := json.Marshal(d)
			if _, err := decodeDashboard(bad); err == nil {
				t.Error("decoded")
			}
		})
	}
}

// panel returns the first panel of a type.
func panel(d map[string]any, typ string) map[string]any {
	for _, p := range d["panels"].([]any) {
		if p := p.(map[string]any); p["type"] == typ {
			return p
		}
	}
	panic("no " + typ + " panel")
}
