package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// mgmt is a management request with an API key or the admin token, from
// 127.0.0.1 or, with xff, from the address a trusted proxy names.
func (e *idEnv) mgmt(t *testing.T, method, path, apiKey, adminToken, body string, xff ...string) *http.Request {
	t.Helper()
	req := e.newRequest(t, method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if apiKey != "" {
		req.Header.Set("apikey", apiKey)
	}
	if adminToken != "" {
		req.Header.Set("Authorization", "Bearer "+adminToken)
	}
	for _, x := range xff {
		req.Header.Add("X-Forwarded-For", x)
	}
	return req
}

// items returns the items of a list answer, by id field.
func items(t *testing.T, r result, idField string) map[string]map[string]any {
	t.Helper()
	list, ok := r.body["items"].([]any)
	if r.status != 200 || !ok {
		t.Fatalf("list = %d %v", r.status, r.body)
	}
	out := map[string]map[string]any{}
	for _, it := range list {
		m := it.(map[string]any)
		out[m[idField].(string)] = m
	}
	return out
}

func TestManageAPIKeys(t *testing.T) {
	e := newIDEnv(t, idOptions{})
	admin := e.creds.AdminToken

	// Create with an AudioHook secret: both secrets are shown once.
	r := e.send(t, e.mgmt(t, "POST", "/management/v1/api_keys", e.creds.APIKey, "",
		`{"name":"contact centre","role":"user","audiohook_secret":true,"future_field":1}`))
	if r.status != 201 || !strings.HasPrefix(r.body["key"].(string), "esk_") || r.body["audiohook_client_secret"] == "" ||
		r.body["service"] != "streaming" || r.body["role"] != "user" || r.body["tenant_id"] != "default" || r.body["audiohook_secret"] != true {
		t.Fatalf("create = %d %v", r.status, r.body)
	}
	checkHTTPDate(t, r.body["created_at"])
	newKey, id := r.body["key"].(string), r.body["id"].(string)
	e.secrets = append(e.secrets, newKey, r.body["audiohook_client_secret"].(string))

	// The new key works on the streaming interface at once.
	streaming := func(key string) int {
		req := e.newRequest(t, "GET", "/v1/audio_settings/8b0e5a0e-3c2f-4d0a-9c67-6f0f1f0c2b7a", nil)
		req.Header.Set("apikey", key)
		return e.send(t, req).status
	}
	if code := streaming(newKey); code != http.StatusNotFound {
		t.Fatalf("new key on the streaming interface = %d, want 404 (authenticated)", code)
	}

	// Lists never show secrets, and show only the caller's service.
	list := e.send(t, e.mgmt(t, "GET", "/management/v1/api_keys", e.creds.APIKey, "", ""))
	got := items(t, list, "id")
	if got[id] == nil || got[id]["key"] != nil || got[id]["audiohook_client_secret"] != nil || got[id]["name"] != "contact centre" {
		t.Fatalf("list = %v", list.body)
	}
	for _, it := range got {
		if it["service"] != "streaming" {
			t.Errorf("a streaming key lists a %v key", it["service"])
		}
	}
	if all := items(t, e.send(t, e.mgmt(t, "GET", "/management/v1/api_keys", "", admin, "")), "id"); len(all) <= len(got) {
		t.Errorf("the admin sees %d keys, the streaming key %d: the admin sees every service", len(all), len(got))
	}
	if other := items(t, e.send(t, e.mgmt(t, "GET", "/management/v1/api_keys?tenant_id=other", "", admin, "")), "id"); len(other) != 1 {
		t.Errorf("admin's list of tenant other = %v", other)
	}

	// Revocation takes effect at once.
	if r := e.send(t, e.mgmt(t, "DELETE", "/management/v1/api_keys/"+id, e.creds.APIKey, "", "")); r.status != 204 {
		t.Fatalf("revoke = %d %v", r.status, r.body)
	}
	if code := streaming(newKey); code != http.StatusUnauthorized {
		t.Fatalf("revoked key on the streaming interface = %d, want 401", code)
	}
	if r := e.send(t, e.mgmt(t, "DELETE", "/management/v1/api_keys/"+id, e.creds.APIKey, "", "")); r.status != 404 {
		t.Fatalf("second revoke = %d %v", r.status, r.body)
	}
	if _, ok := items(t, e.send(t, e.mgmt(t, "GET", "/management/v1/api_keys", e.creds.APIKey, "", "")), "id")[id]; ok {
		t.Fatal("a revoked key is still listed")
	}

	// A key of service billing manages billing keys.
	r = e.send(t, e.mgmt(t, "POST", "/management/v1/api_keys", e.billingKey, "", `{}`))
	if r.status != 201 || r.body["service"] != "billing" || r.body["role"] != "user" || r.body["audiohook_client_secret"] != nil {
		t.Fatalf("billing create = %d %v", r.status, r.body)
	}
	e.secrets = append(e.secrets, r.body["key"].(string))

	// The admin creates keys in any tenant and service.
	r = e.send(t, e.mgmt(t, "POST", "/management/v1/api_keys", "", admin, `{"tenant_id":"other","service":"billing","role":"admin"}`))
	if r.status != 201 || r.body["tenant_id"] != "other" || r.body["service"] != "billing" {
		t.Fatalf("admin create = %d %v", r.status, r.body)
	}
	e.secrets = append(e.secrets, r.body["key"].(string))

	// Every change is in the audit log, with its actor and no secret.
	changes := e.audit.FilterMessage("management change").All()
	if len(changes) != 4 {
		t.Fatalf("%d audit entries, want 4", len(changes))
	}
	if c := changes[1].ContextMap(); c["change"] != "api_key_revoked" || c["key_id"] != id || c["client_addr"] != "127.0.0.1" ||
		!strings.HasPrefix(c["actor"].(string), "api_key:") || c["request_id"] == "" {
		t.Errorf("audit entry = %v", c)
	}
	if n := testutil.ToFloat64(metricVec(t, e.reg, "earshot_management_changes_total", "kind", "api_key_created")); n != 3 {
		t.Errorf("api_key_created counted %v, want 3", n)
	}
}

func TestManageAllowList(t *testing.T) {
	e := newIDEnv(t, idOptions{})
	key := e.creds.APIKey
	r := e.send(t, e.mgmt(t, "POST", "/management/v1/ip_allowlist", key, "", `{"cidr":"2001:DB8:0:0::1/48"}`))
	if r.status != 201 || r.body["cidr"] != "2001:db8::/48" || r.body["service"] != "streaming" {
		t.Fatalf("add = %d %v", r.status, r.body)
	}
	v6 := r.body["id"].(string)
	r = e.send(t, e.mgmt(t, "POST", "/management/v1/ip_allowlist", key, "", `{"cidr":"198.51.100.7"}`))
	if r.status != 201 || r.body["cidr"] != "198.51.100.7/32" {
		t.Fatalf("add single address = %d %v", r.status, r.body)
	}
	single := r.body["id"].(string)

	// The new entry admits its address at once (through the trusted proxy).
	if r := e.send(t, e.mgmt(t, "GET", "/management/v1/ip_allowlist", key, "", "", "198.51.100.7")); r.status != 200 {
		t.Fatalf("request from a new entry's address = %d %v", r.status, r.body)
	}
	if r := e.send(t, e.mgmt(t, "GET", "/management/v1/ip_allowlist", key, "", "", "2001:db8:0:ffff::9")); r.status != 200 {
		t.Fatalf("request from inside the IPv6 prefix = %d %v", r.status, r.body)
	}
	got := items(t, e.send(t, e.mgmt(t, "GET", "/management/v1/ip_allowlist", key, "", "")), "id")
	if len(got) != 4 || got[v6]["cidr"] != "2001:db8::/48" {
		t.Fatalf("list = %v", got)
	}

	// Deleting the entry the caller stands on is refused while it is the
	// only one admitting it, and allowed once another does.
	r = e.send(t, e.mgmt(t, "DELETE", "/management/v1/ip_allowlist/"+single, key, "", "", "198.51.100.7"))
	if r.status != 409 || r.body["code"] != "Conflict" {
		t.Fatalf("lock-out delete = %d %v", r.status, r.body)
	}
	e.send(t, e.mgmt(t, "POST", "/management/v1/ip_allowlist", key, "", `{"cidr":"198.51.100.0/24"}`))
	if r := e.send(t, e.mgmt(t, "DELETE", "/management/v1/ip_allowlist/"+single, key, "", "", "198.51.100.7")); r.status != 204 {
		t.Fatalf("delete with another entry admitting = %d %v", r.status, r.body)
	}
	// The admin token's addresses are those of every service of its tenant.
	if r := e.send(t, e.mgmt(t, "DELETE", "/management/v1/ip_allowlist/"+v6, "", e.creds.AdminToken, "")); r.status != 204 {
		t.Fatalf("admin delete = %d %v", r.status, r.body)
	}
	if n := len(e.audit.FilterMessage("management change").All()); n != 5 {
		t.Errorf("%d audit entries, want 5", n)
	}
}

func TestManageOAuthClientsAndTenants(t *testing.T) {
	e := newIDEnv(t, idOptions{scorer: true})
	admin := e.creds.AdminToken
	r := e.send(t, e.mgmt(t, "POST", "/management/v1/tenants", "", admin, `{"id":"acme"}`))
	if r.status != 201 || r.body["id"] != "acme" {
		t.Fatalf("create tenant = %d %v", r.status, r.body)
	}
	if r := e.send(t, e.mgmt(t, "POST", "/management/v1/tenants", "", admin, `{"id":"acme"}`)); r.status != 409 {
		t.Fatalf("duplicate tenant = %d %v", r.status, r.body)
	}
	if got := items(t, e.send(t, e.mgmt(t, "GET", "/management/v1/tenants", "", admin, "")), "id"); got["acme"] == nil || got["default"] == nil {
		t.Fatalf("tenants = %v", got)
	}
	r = e.send(t, e.mgmt(t, "POST", "/management/v1/oauth_clients", "", admin, `{"tenant_id":"acme"}`))
	if r.status != 201 || r.body["tenant_id"] != "acme" || !strings.HasPrefix(r.body["client_secret"].(string), "esc_") {
		t.Fatalf("create client = %d %v", r.status, r.body)
	}
	id, secret := r.body["client_id"].(string), r.body["client_secret"].(string)
	e.secrets = append(e.secrets, secret)
	list := items(t, e.send(t, e.mgmt(t, "GET", "/management/v1/oauth_clients?tenant_id=acme", "", admin, "")), "client_id")
	if list[id] == nil || list[id]["client_secret"] != nil {
		t.Fatalf("clients = %v", list)
	}

	// The new client gets tokens of its tenant, which work there.
	tok := e.token(t, "acme", clientForm(id, secret))
	body, ct := form(t, testWAV(t, mono8k, 0.25))
	if r := e.send(t, e.singlesRequest(t, "acme", tok["access_token"].(string), body, ct)); r.status != 200 {
		t.Fatalf("singles with the new tenant's token = %d %v", r.status, r.body)
	}

	// Revoking the client ends its access token, its refresh token and
	// the grant at once.
	if r := e.send(t, e.mgmt(t, "DELETE", "/management/v1/oauth_clients/"+id, "", admin, "")); r.status != 204 {
		t.Fatalf("revoke client = %d %v", r.status, r.body)
	}
	if r := e.send(t, e.singlesRequest(t, "acme", tok["access_token"].(string), body, ct)); r.status != 401 {
		t.Fatalf("access token of a revoked client = %d %v", r.status, r.body)
	}
	rf := e.send(t, e.tokenRequest(t, "acme", clientForm(id, secret, "grant_type", "refresh_token", "refresh_token", tok["refresh_token"].(string), "scope", "")))
	if rf.status != 401 || rf.body["error"] != "invalid_client" {
		t.Fatalf("refresh of a revoked client = %d %v", rf.status, rf.body)
	}
	if r := e.send(t, e.tokenRequest(t, "acme", clientForm(id, secret))); r.status != 401 {
		t.Fatalf("grant of a revoked client = %d %v", r.status, r.body)
	}
	if r := e.send(t, e.mgmt(t, "DELETE", "/management/v1/oauth_clients/"+id, "", admin, "")); r.status != 404 {
		t.Fatalf("second revoke = %d %v", r.status, r.body)
	}
}

func TestAdminPasswordAndToken(t *testing.T) {
	e := newIDEnv(t, idOptions{})
	old := e.creds.AdminToken
	r := e.send(t, e.mgmt(t, "PUT", "/management/v1/admin/password", "", old,
		`{"current_password":"`+e.creds.AdminPassword+`","new_password":"a much longer passphrase"}`))
	if r.status != 204 {
		t.Fatalf("change password = %d %v", r.status, r.body)
	}
	e.secrets = append(e.secrets, "a much longer passphrase")
	r = e.send(t, e.mgmt(t, "POST", "/management/v1/admin/token", "", old, `{"password":"`+e.creds.AdminPassword+`"}`))
	if r.status != 401 {
		t.Fatalf("rotation with the old password = %d %v", r.status, r.body)
	}
	r = e.send(t, e.mgmt(t, "POST", "/management/v1/admin/token", "", old, `{"password":"a much longer passphrase"}`))
	if r.status != 201 || !strings.HasPrefix(r.body["token"].(string), "est_") {
		t.Fatalf("rotate token = %d %v", r.status, r.body)
	}
	fresh := r.body["token"].(string)
	e.secrets = append(e.secrets, fresh)
	if r := e.send(t, e.mgmt(t, "GET", "/management/v1/tenants", "", old, "")); r.status != 401 {
		t.Fatalf("old admin token after rotation = %d", r.status)
	}
	if r := e.send(t, e.mgmt(t, "GET", "/management/v1/tenants", "", fresh, "")); r.status != 200 {
		t.Fatalf("new admin token = %d %v", r.status, r.body)
	}
	kinds := map[string]bool{}
	for _, entry := range e.audit.FilterMessage("management change").All() {
		kinds[entry.ContextMap()["change"].(string)] = true
	}
	if !kinds["admin_password_changed"] || !kinds["admin_token_rotated"] {
		t.Errorf("audit kinds %v", kinds)
	}
}
