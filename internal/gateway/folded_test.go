package gateway_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/wire"
)

// A secret written in parts is still a secret: code that builds one from
// constants (concatenation, a template, a join, String.fromCharCode) is
// not learned, and the next run without one is (docs/security.md "Tenants
// and names").
func TestFoldedSecretsNotLearned(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	const tail = `; const n = await mcp.math.add({a: 1, b: 2}); return k.length + n`
	for name, code := range map[string]string{
		"concatenation": `const k = "sk_live_" + "51H8xY2abcdefghijklmn"` + tail,
		"template":      "const p = \"sk_live_\"; const k = `${p}51H8xY2abcdefghijklmn`" + tail,
		"join":          `const k = ["sk", "live", "51H8xY2abcdefghijklmn"].join("_")` + tail,
		"fromCharCode":  `const k = String.fromCharCode(115, 107, 95, 108, 105, 118, 101, 95) + "51H8xY2abcdefghijklmn"` + tail,
	} {
		a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: code, Intent: "key length " + name})
		if a.Status != wire.StatusSuccess || a.Capability != nil {
			t.Fatalf("%s: learned %+v", name, a.Capability)
		}
	}
	_, total, err := g.Service.Store().ListCapabilities(context.Background(), store.CapabilityFilter{Viewer: store.Scope{Org: "acme", Project: "web"}})
	if err != nil || total != 0 {
		t.Fatalf("learned %d (%v)", total, err)
	}
	if ref := learn(t, s, `const k = "pk_" + "public"; const n = await mcp.math.add({a: 1, b: 2}); return k.length + n`, "public key length"); ref.Name == "" {
		t.Fatalf("next run: %+v", ref)
	}
}

// Personal data written in parts cannot be shared: each form is refused
// with INVALID_REQUEST naming the rule and the line, the capability stays
// private, and the next share is served.
func TestFoldedPersonalDataNotShared(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	const head = "const s = await mcp.json.parse({data: \"[1]\"});\n"
	for name, code := range map[string]string{
		"concatenation": head + `return "alice.smith" + "@" + "corp-internal.example" + s.length`,
		"template":      head + "const user = args.user ?? \"someone\";\nreturn `${user}@corp-internal.example` + s.length",
		"expression":    head + `return (args.user ?? "someone") + "@corp-internal.example" + s.length`,
		"join":          head + `return ["alice.smith", "corp-internal.example"].join("@") + s.length`,
		"fromCharCode":  head + `return "alice.smith" + String.fromCharCode(64) + "corp-internal.example" + s.length`,
		"secret":        head + `const k = ["sk", "live", "51H8xY2abcdefghijklmn"].join("_"); return s.length`,
	} {
		ref := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: code, Intent: "mail " + name})
		if name == "secret" {
			// Not even learned; nothing to share.
			if ref.Capability != nil {
				t.Fatalf("%s: learned", name)
			}
			continue
		}
		if ref.Capability == nil {
			t.Fatalf("%s: not learned: %+v", name, ref)
		}
		_, failed := admin(t, s, visibility(ref.Capability.ID, "public"))
		if failed.ErrorCode != pmlerr.InvalidRequest || !strings.Contains(failed.Error, "an e-mail address") ||
			!strings.Contains(failed.Error, "line 2 of the code") && !strings.Contains(failed.Error, "line 3 of the code") {
			t.Fatalf("%s: %+v", name, failed)
		}
		c, err := g.Service.Store().CapabilityByID(context.Background(), ref.Capability.ID)
		if err != nil || c.Visibility != store.VisibilityPrivate {
			t.Fatalf("%s: visibility %q (%v)", name, c.Visibility, err)
		}
	}
	// A URL taking its credentials from arguments is no address.
	url := learn(t, s, head+"return `postgres://${args.user ?? \"u\"}:${args.pw ?? \"p\"}@db.example.com/app` + s.length", "a dsn")
	if _, failed := admin(t, s, visibility(url.ID, "public")); failed.Status != "" {
		t.Fatalf("dsn from args: %+v", failed)
	}
	// Of another shape than the refused ones, which it would refine.
	ok := learn(t, s, head+`const w = ["hello", "world"].join(" "); return {w, n: s.length}`, "greet")
	if _, failed := admin(t, s, visibility(ok.ID, "public")); failed.Status != "" {
		t.Fatalf("next share: %+v", failed)
	}
}

// A capability stored before folded strings were checked, whose code
// builds a secret from parts, is not served.
func TestRegistryWithholdsFoldedSecrets(t *testing.T) {
	g := startRegistry(t)
	acme := store.Scope{Org: "acme", Project: "web"}
	code := `const k = ["sk", "live", "51H8xY2abcdefghijklmn"].join("_"); return k`
	if _, err := g.Service.Store().SaveCapability(context.Background(), store.Capability{Scope: acme, Namespace: "cap", Action: "legacy",
		Code: code, Routing: "server", Visibility: store.VisibilityPublic}); err != nil {
		t.Fatal(err)
	}
	other := g.NewKey(t, store.Scope{Org: "globex", Project: "web"})
	if r := get(t, g, other, "/mcp/acme.web.cap.legacy"); r.status != http.StatusForbidden || r.json(t)["error"] != "secret_withheld" {
		t.Fatalf("HTTP %d %s", r.status, r.body)
	}
	ref := learn(t, g.Connect(t, g.Key, false), sumCode, "Sum two numbers")
	if r := get(t, g, g.Key, "/mcp/"+ref.FQDN); r.status != http.StatusOK {
		t.Fatalf("next entry: HTTP %d", r.status)
	}
}
