package gateway_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/registry/fqdn"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/wire"
)

const sumCode = `const s = await mcp.math.add({ a: args.a ?? 1, b: args.b ?? 2 }); return s;`

// A capability's code, with its headers.
func TestRegistryCapabilityCode(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	ref := learn(t, s, sumCode, "Sum two numbers")
	want, integrity := fqdn.ForCode("acme", "web", "cap", "sum_numbers", sumCode)
	if ref.FQDN != want.String() || ref.Name != "cap:sum_numbers" || ref.ID == "" {
		t.Fatalf("capability ref %+v, want fqdn %s", ref, want)
	}
	r := get(t, g, g.Key, "/mcp/"+ref.FQDN)
	if r.status != http.StatusOK || string(r.body) != sumCode {
		t.Fatalf("HTTP %d: %s", r.status, r.body)
	}
	for k, v := range map[string]string{
		"Content-Type": "application/typescript", "X-PML-Type": "code", "X-PML-Routing": "server",
		"ETag": `"` + integrity + `"`,
		// Private to its project: no shared cache may keep it.
		"Cache-Control": "private, max-age=3600",
	} {
		if got := r.header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
}

// A built-in tool's code; the four-part name redirects.
func TestRegistryBuiltinAndRedirect(t *testing.T) {
	g := startRegistry(t)
	r := get(t, g, g.Key, "/mcp/pml.std.json.parse")
	if r.status != http.StatusFound || r.header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("four-part: HTTP %d %v", r.status, r.header)
	}
	loc := r.header.Get("Location")
	n, err := fqdn.Parse(strings.TrimPrefix(loc, "/mcp/"))
	if !strings.HasPrefix(loc, "/mcp/pml.std.json.parse.") || err != nil || n.Hash == "" {
		t.Fatalf("Location %q", loc)
	}
	r = get(t, g, g.Key, loc)
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/typescript" ||
		r.header.Get("X-PML-Routing") != "server" || r.header.Get("Cache-Control") != "public, max-age=3600" ||
		!strings.Contains(string(r.body), "return await mcp.json.parse(args);") ||
		r.header.Get("ETag") != `"`+fqdn.Integrity(r.body)+`"` {
		t.Fatalf("built-in: HTTP %d %v\n%s", r.status, r.header, r.body)
	}
	// The package's client built-ins are published too, routed to the client.
	r = get(t, g, g.Key, "/mcp/pml.std.filesystem.read_file")
	if r = get(t, g, g.Key, r.header.Get("Location")); r.header.Get("X-PML-Routing") != "client" {
		t.Fatalf("filesystem:read_file: %v", r.header)
	}
	// A built-in's code declares what it returns (docs/how-it-works.md "Typed answers").
	r = get(t, g, g.Key, "/mcp/pml.std.math.add")
	if r = get(t, g, g.Key, r.header.Get("Location")); !strings.Contains(string(r.body), "): Promise<number>\n") {
		t.Fatalf("math:add's code:\n%s", r.body)
	}
}

// Server metadata.
func TestRegistryServerMetadata(t *testing.T) {
	g := startRegistry(t)
	// The integrity is that of the metadata without its warnings and with
	// no tools: the same as before tools and warnings were filled.
	warnings := map[string]string{
		"serena": `["installed and run on your machine","requires keys: SERENA_KEY"]`,
		"tavily": `["hosted: runs on the gateway","requires keys: TAVILY_API_KEY"]`,
	}
	for name, want := range map[string]string{
		"serena": `{"description":"Code analysis","install":{"args":["@example/serena"],"command":"npx","env":{"SERENA_KEY":"${SERENA_KEY}"},"envRequired":["SERENA_KEY"]},"routing":"client","tools":[],"type":"stdio"}`,
		"tavily": `{"description":"Web search","envRequired":["TAVILY_API_KEY"],"proxyTo":"http://127.0.0.1:1","routing":"server","tools":[],"type":"http"}`,
	} {
		r := get(t, g, g.Key, "/mcp/pml.mcp."+name+".server")
		r = get(t, g, g.Key, r.header.Get("Location"))
		if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: HTTP %d %v", name, r.status, r.header)
		}
		m := r.json(t)
		fq, integrity := m["fqdn"].(string), m["integrity"].(string)
		n, err := fqdn.Parse(fq)
		if err != nil || n.Base() != "pml.mcp."+name+".server" || n.Hash != fqdn.Hash4(integrity) ||
			r.header.Get("ETag") != `"`+integrity+`"` || r.header.Get("X-PML-Type") != m["type"] {
			t.Errorf("%s: fqdn %q integrity %q headers %v", name, fq, integrity, r.header)
		}
		delete(m, "fqdn")
		delete(m, "integrity")
		if got, _ := fqdn.CanonicalJSON(m["warnings"]); string(got) != warnings[name] {
			t.Errorf("%s warnings %s, want %s", name, got, warnings[name])
		}
		delete(m, "warnings")
		if got, _ := fqdn.CanonicalJSON(m); string(got) != want {
			t.Errorf("%s metadata\n%s\nwant\n%s", name, got, want)
		}
		if got := fqdn.Integrity([]byte(want)); got != integrity {
			t.Errorf("%s: integrity %s is not that of the metadata (%s)", name, integrity, got)
		}
	}
	// The package's catalog lookup agrees with the registry.
	ce, ok := g.Service.CatalogServer("serena")
	if !ok || ce.Type != "stdio" || ce.Install.Command != "npx" || !strings.HasPrefix(ce.FQDN, "pml.mcp.serena.server.") {
		t.Fatalf("CatalogServer: %+v", ce)
	}
	if r := get(t, g, g.Key, "/mcp/"+ce.FQDN); r.status != http.StatusOK || r.json(t)["integrity"] != ce.Integrity {
		t.Fatalf("CatalogServer's FQDN is not served: HTTP %d", r.status)
	}
}

// A stale hash, an unknown name and a malformed name, each followed by a
// good request.
func TestRegistryNotFound(t *testing.T) {
	g := startRegistry(t)
	good := get(t, g, g.Key, "/mcp/pml.std.json.parse").header.Get("Location")
	current := strings.TrimPrefix(good, "/mcp/")
	n, _ := fqdn.Parse(current)
	wrongHash := "0000"
	if n.Hash == wrongHash {
		wrongHash = "ffff"
	}
	tests := []struct{ path, want string }{
		{"/mcp/pml.std.json.parse." + wrongHash, `{"currentFqdn":"` + current + `","error":"hash_mismatch","message":"Hash '` + wrongHash + `' does not match current hash '` + n.Hash + `' for pml.std.json.parse"}`},
		{"/mcp/pml.std.json.parse.xxxx", `{"currentFqdn":"` + current + `","error":"hash_mismatch","message":"Hash 'xxxx' does not match current hash '` + n.Hash + `' for pml.std.json.parse"}`},
		{"/mcp/pml.std.json.parse.ABCD", `{"currentFqdn":"` + current + `","error":"hash_mismatch","message":"Hash 'ABCD' does not match current hash '` + n.Hash + `' for pml.std.json.parse"}`},
		{"/mcp/pml.std.json.parse.abcde", `{"error":"not_found","message":"MCP 'pml.std.json.parse.abcde' not in registry: invalid fqdn \"pml.std.json.parse.abcde\": hash \"abcde\": want 4 lowercase hex digits"}`},
		{"/mcp/pml.std.json.nope.xxxx", `{"error":"not_found","message":"MCP 'pml.std.json.nope' not in registry"}`},
		{"/mcp/unknown.thing.here.now.abcd", `{"error":"not_found","message":"MCP 'unknown.thing.here.now' not in registry"}`},
		{"/mcp/pml.std.json.nope", `{"error":"not_found","message":"MCP 'pml.std.json.nope' not in registry"}`},
	}
	for _, tt := range tests {
		r := get(t, g, g.Key, tt.path)
		if got, _ := fqdn.CanonicalJSON(r.json(t)); r.status != http.StatusNotFound || string(got) != tt.want {
			t.Errorf("%s: HTTP %d %s\nwant %s", tt.path, r.status, got, tt.want)
		}
		if r := get(t, g, g.Key, good); r.status != http.StatusOK {
			t.Fatalf("next request: HTTP %d", r.status)
		}
	}
	r := get(t, g, g.Key, "/mcp/not..a.name")
	if m := r.json(t); r.status != http.StatusNotFound || m["error"] != "not_found" {
		t.Errorf("malformed: HTTP %d %v", r.status, m)
	}
	if r := get(t, g, "", good); r.status != http.StatusUnauthorized {
		t.Errorf("no key: HTTP %d", r.status)
	}
	if r := get(t, g, "pml_bogus", "/mcp"); r.status != http.StatusUnauthorized {
		t.Errorf("bad key on the catalog: HTTP %d", r.status)
	}
}

// Conditional requests.
func TestRegistryNotModified(t *testing.T) {
	g := startRegistry(t)
	path := get(t, g, g.Key, "/mcp/pml.mcp.serena.server").header.Get("Location")
	first := get(t, g, g.Key, path)
	etag := first.header.Get("ETag")
	for _, inm := range []string{etag, "W/" + etag, `"sha256-other", ` + etag, "*"} {
		r := get(t, g, g.Key, path, "If-None-Match", inm)
		if r.status != http.StatusNotModified || len(r.body) != 0 || r.header.Get("ETag") != etag ||
			r.header.Get("Cache-Control") != "public, max-age=3600" {
			t.Errorf("If-None-Match %s: HTTP %d %v", inm, r.status, r.header)
		}
	}
	if r := get(t, g, g.Key, path, "If-None-Match", `"sha256-other"`); r.status != http.StatusOK || string(r.body) != string(first.body) {
		t.Errorf("stale tag: HTTP %d", r.status)
	}
}

// The catalog; the MCP GET still reaches the MCP handler.
func TestRegistryCatalog(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	learn(t, s, sumCode, "Sum two numbers")
	var all struct {
		Items              []struct{ FQDN, Type, Routing, Description string }
		Total, Page, Limit int
	}
	r := get(t, g, g.Key, "/mcp")
	if err := json.Unmarshal(r.body, &all); err != nil || r.status != http.StatusOK {
		t.Fatalf("HTTP %d: %s", r.status, r.body)
	}
	if all.Page != 1 || all.Limit != 50 || all.Total < 30 || len(all.Items) != 50 {
		t.Fatalf("page %d limit %d total %d items %d", all.Page, all.Limit, all.Total, len(all.Items))
	}
	byType := map[string]int{}
	for p := 1; (p-1)*200 < all.Total; p++ {
		r := get(t, g, g.Key, "/mcp?limit=200&page="+string(rune('0'+p)))
		var page struct {
			Items []struct{ FQDN, Type string }
		}
		_ = json.Unmarshal(r.body, &page)
		for _, it := range page.Items {
			byType[it.Type]++
		}
	}
	if byType["stdio"] != 1 || byType["http"] != 1 || byType["code"] != all.Total-2 {
		t.Fatalf("types %v of %d", byType, all.Total)
	}
	for _, typ := range []string{"stdio", "http", "code"} {
		var c struct {
			Items []struct{ Type string }
			Total int
		}
		_ = json.Unmarshal(get(t, g, g.Key, "/mcp?type="+typ+"&limit=200").body, &c)
		if c.Total != byType[typ] || len(c.Items) != c.Total {
			t.Errorf("type=%s: %d of %d", typ, len(c.Items), c.Total)
		}
		for _, it := range c.Items {
			if it.Type != typ {
				t.Errorf("type=%s lists %s", typ, it.Type)
			}
		}
	}
	var named struct{ Items []struct{ FQDN string } }
	_ = json.Unmarshal(get(t, g, g.Key, "/mcp?name=cap:sum_numbers").body, &named)
	if len(named.Items) != 1 || !strings.HasPrefix(named.Items[0].FQDN, "acme.web.cap.sum_numbers.") {
		t.Errorf("name filter: %+v", named)
	}
	for _, q := range []string{"type=python", "page=0", "limit=x", "limit=201", "limit=99999999", "page=1048577", "limit=-1"} {
		if r := get(t, g, g.Key, "/mcp?"+q); r.status != http.StatusBadRequest || r.json(t)["error"] != "bad_request" {
			t.Errorf("%s: HTTP %d", q, r.status)
		}
	}
	// Streamable HTTP's GET is still MCP's (stateless: no stream to open).
	if r := get(t, g, g.Key, "/mcp", "Accept", "text/event-stream"); r.status == http.StatusOK && strings.Contains(string(r.body), `"items"`) {
		t.Errorf("event-stream GET got the catalog")
	}
	alive(t, s)
}

// Another tenant's private capability is a plain 404; shared, it is visible.
func TestRegistryTenantIsolation(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	ref := learn(t, s, sumCode, "Sum two numbers")
	other := g.NewKey(t, store.Scope{Org: "globex", Project: "web"})
	sibling := g.NewKey(t, store.Scope{Org: "acme", Project: "api"})
	unknown := get(t, g, other, "/mcp/acme.web.cap.nothing_here.abcd").json(t)
	for _, key := range []string{other, sibling} {
		r := get(t, g, key, "/mcp/"+ref.FQDN)
		m := r.json(t)
		if r.status != http.StatusNotFound || m["error"] != "not_found" || m["currentFqdn"] != nil || unknown["error"] != m["error"] {
			t.Fatalf("private entry seen by another tenant: HTTP %d %v", r.status, m)
		}
		if r := get(t, g, key, "/mcp/acme.web.cap.sum_numbers"); r.status != http.StatusNotFound {
			t.Fatalf("four-part name redirects for another tenant: HTTP %d", r.status)
		}
	}
	if _, failed := admin(t, s, visibility(ref.ID, "org")); failed.Status != "" {
		t.Fatal(failed)
	}
	if r := get(t, g, sibling, "/mcp/"+ref.FQDN); r.status != http.StatusOK || r.header.Get("Cache-Control") != "private, max-age=3600" {
		t.Fatalf("org-visible entry from a sibling project: HTTP %d", r.status)
	}
	if r := get(t, g, other, "/mcp/"+ref.FQDN); r.status != http.StatusNotFound {
		t.Fatalf("org-visible entry from another org: HTTP %d", r.status)
	}
	if _, failed := admin(t, s, visibility(ref.FQDN, "public")); failed.Status != "" {
		t.Fatal(failed)
	}
	r := get(t, g, other, "/mcp/"+ref.FQDN)
	if r.status != http.StatusOK || r.header.Get("Cache-Control") != "public, max-age=3600" {
		t.Fatalf("public entry: HTTP %d %v", r.status, r.header)
	}
	// Listed for the other org, but a bare name never reaches it: that org
	// calls it by its qualified name.
	var cat struct{ Items []struct{ FQDN string } }
	_ = json.Unmarshal(get(t, g, other, "/mcp?type=code").body, &cat)
	if !slices.ContainsFunc(cat.Items, func(it struct{ FQDN string }) bool { return it.FQDN == ref.FQDN }) {
		t.Fatalf("public capability missing from another tenant's catalog: %+v", cat)
	}
	cat.Items = nil
	_ = json.Unmarshal(get(t, g, other, "/mcp?type=code&name=cap:sum_numbers").body, &cat)
	if len(cat.Items) != 0 {
		t.Fatalf("another org's public capability under a bare name: %+v", cat)
	}
	_ = json.Unmarshal(get(t, g, other, "/mcp?type=code&name=acme.web.cap:sum_numbers").body, &cat)
	if len(cat.Items) != 1 || cat.Items[0].FQDN != ref.FQDN {
		t.Fatalf("public capability by its qualified name: %+v", cat)
	}
}

func visibility(target, v string) wire.AdminRequest {
	return wire.AdminRequest{Action: "visibility", Target: target, Visibility: v}
}

// Local mode's transport serves the same registry without a key.
func TestRegistryLocalTransport(t *testing.T) {
	g := startRegistry(t)
	c := &http.Client{Transport: g.Service.LocalTransport(store.Scope{Org: "acme", Project: "web"})}
	resp, err := c.Get("http://in-process/mcp/pml.std.json.parse")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Request.URL.Path, "/mcp/pml.std.json.parse.") {
		t.Fatalf("HTTP %d at %s", resp.StatusCode, resp.Request.URL)
	}
	resp, err = c.Post("http://in-process/api/v1/capabilities", "application/json", strings.NewReader(`{"code":"return (await mcp.math.add({a: 3, b: 4})) * 1","intent":"seven"}`))
	if err != nil {
		t.Fatal(err)
	}
	var ref wire.CapabilityRef
	_ = json.NewDecoder(resp.Body).Decode(&ref)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || ref.Name != "cap:seven" || !strings.HasPrefix(ref.FQDN, "acme.web.cap.seven.") {
		t.Fatalf("learn: HTTP %d %+v", resp.StatusCode, ref)
	}
}
