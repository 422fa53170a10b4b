package gateway_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/registry/fqdn"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/wire"
)

const ghToken = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"

// Code or an intent holding a literal secret is not learned: neither a
// gateway run, nor a package's report of a local run, nor a run the caller
// asks not to learn.
func TestSecretsNotLearned(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	acme := store.Scope{Org: "acme", Project: "web"}
	for _, req := range []wire.ExecuteRequest{
		{Code: `const token = "` + ghToken + `"; return token.length`, Intent: "token length"},
		{Code: `return await mcp.string.upper({text: "x"})`, Intent: "use password=hunter2-and-more"},
		{Code: `return await mcp.math.add({a: 1, b: 2})`, Options: &wire.ExecuteOptions{Learn: wire.Bool(false)}},
	} {
		a := gatewaytest.Execute(t, s, req)
		if a.Status != wire.StatusSuccess || a.Capability != nil {
			t.Fatalf("%q: %+v", req.Code, a)
		}
	}
	post := func(body string) int {
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/api/v1/capabilities", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+g.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := post(`{"code":"const k = \"` + ghToken + `\"; return await mcp.filesystem.read_file({path: k})","intent":"local"}`); st != http.StatusNoContent {
		t.Fatalf("report of a local run with a secret: HTTP %d", st)
	}
	caps, total, err := g.Service.Store().ListCapabilities(context.Background(), store.CapabilityFilter{Viewer: acme})
	if err != nil || total != 0 {
		t.Fatalf("learned %d: %+v %v", total, caps, err)
	}
	// The next runs, without a secret, are learned as before.
	if ref := learn(t, s, `return (await mcp.math.add({a: 1, b: 2})) * 2`, "add"); ref.Name != "cap:add" {
		t.Fatalf("%+v", ref)
	}
	if st := post(`{"code":"const t = await mcp.filesystem.read_file({path: args.p}); return t","intent":"read"}`); st != http.StatusOK {
		t.Fatalf("next report: HTTP %d", st)
	}
}

// A capability holding a secret, stored before such code stopped being
// learned, is never served by the registry; the others still are.
func TestRegistryWithholdsSecrets(t *testing.T) {
	g := startRegistry(t)
	acme := store.Scope{Org: "acme", Project: "web"}
	code := `const token = "` + ghToken + `"; return token`
	_, err := g.Service.Store().SaveCapability(context.Background(), store.Capability{Scope: acme, Namespace: "cap", Action: "legacy",
		Code: code, Routing: "client", Visibility: store.VisibilityPublic})
	if err != nil {
		t.Fatal(err)
	}
	other := g.NewKey(t, store.Scope{Org: "globex", Project: "web"})
	for _, key := range []string{g.Key, other} {
		n, _ := fqdn.ForCode("acme", "web", "cap", "legacy", code)
		for _, path := range []string{"/mcp/acme.web.cap.legacy", "/mcp/" + n.String()} {
			r := get(t, g, key, path)
			if r.status != http.StatusForbidden || r.json(t)["error"] != "secret_withheld" || strings.Contains(string(r.body), ghToken) {
				t.Fatalf("GET %s: HTTP %d %s", path, r.status, r.body)
			}
		}
	}
	ref := learn(t, g.Connect(t, g.Key, false), sumCode, "Sum two numbers")
	if r := get(t, g, g.Key, "/mcp/"+ref.FQDN); r.status != http.StatusOK || string(r.body) != sumCode {
		t.Fatalf("next entry: HTTP %d", r.status)
	}
}
