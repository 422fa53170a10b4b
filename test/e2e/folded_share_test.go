//go:build linux

package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// Issue 39, finding 4: secrets and e-mail addresses built from parts are
// not shared. A's package runs code that builds them from constants; the
// secret is not learned, each address is refused when A shares it (the
// rule and the line named), B never gets it, and the next request of each
// kind is served.
func TestFoldedConstantsAreNotShared(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	keyA := g.NewKey(t, store.Scope{Org: "orga", Project: "proja"})
	keyB := g.NewKey(t, store.Scope{Org: "orgb", Project: "projb"})
	scopeA := store.Scope{Org: "orga", Project: "proja"}
	pa := startStdio(t, testfixture.Workspace(t, nil), []string{"PML_CLOUD_URL=" + g.URL, "PML_API_KEY=" + keyA})
	adminA := g.Connect(t, keyA, false)

	const head = "const s = await mcp.json.parse({data: \"[1]\"});\n"
	secret := pa.executeReq(t, wire.ExecuteRequest{Intent: "stripe key length",
		Code: head + `const k = "sk_live_" + "51H8xY2abcdefghijklmn"; return k.length + s.length`})
	if secret.Status != wire.StatusSuccess || secret.Capability != nil {
		t.Fatalf("a secret in parts was learned: %+v", secret)
	}

	for action, code := range map[string]string{
		"mail_alice_concat":   head + `return "alice.smith" + "@" + "corp-internal.example" + s.length`,
		"mail_user_template":  head + "const user = args.user ?? \"someone\";\nreturn `${user}@corp-internal.example` + s.length",
		"mail_alice_join":     head + `return ["alice.smith", "corp-internal.example"].join("@") + s.length`,
		"mail_alice_charcode": head + `return "alice.smith" + String.fromCharCode(64) + "corp-internal.example" + s.length`,
	} {
		wantSuccess(t, pa.executeReq(t, wire.ExecuteRequest{Code: code, Intent: strings.ReplaceAll(action, "_", " ")}), nil)
		c := waitCapability(t, g, scopeA, action)
		refused := adminErr(t, adminA, wire.AdminRequest{Action: "visibility", Target: c.ID, Visibility: "public"})
		wantGatewayError(t, refused, pmlerr.InvalidRequest)
		if !strings.Contains(refused.Error, "an e-mail address") || !strings.Contains(refused.Error, "a string built from parts") {
			t.Fatalf("%s: %+v", action, refused)
		}
		if r := httpGet(t, g.URL+"/mcp/orga.proja.cap."+action, keyB); r.StatusCode == http.StatusOK {
			t.Fatalf("%s: B got A's refused skill", action)
		}
	}

	// The next request is served: a skill without one is learned and
	// shared, and B gets it.
	wantSuccess(t, pa.executeReq(t, wire.ExecuteRequest{Intent: "greet the world",
		Code: head + `const w = ["hello", "world"].join(" "); return {w, n: s.length}`}), nil)
	c := waitCapability(t, g, scopeA, "greet_world")
	adminOK(t, adminA, wire.AdminRequest{Action: "visibility", Target: c.ID, Visibility: "public"})
	if r := httpGet(t, g.URL+"/mcp/orga.proja.cap.greet_world", keyB); r.StatusCode != http.StatusOK {
		t.Fatalf("B's GET of the shared skill: HTTP %d", r.StatusCode)
	}
}

func httpGet(t *testing.T, url, key string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}
