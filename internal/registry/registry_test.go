package registry

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/registry/fqdn"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/store"
)

func mustParse(t testing.TB, s string) fqdn.Name {
	t.Helper()
	n, err := fqdn.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestBuiltinEntry(t *testing.T) {
	r := testRegistry(t, nil)
	e, ok := r.Builtin("json:parse")
	if !ok {
		t.Fatal("json:parse not published")
	}
	if e.Name.Base() != "pml.std.json.parse" || e.Type != TypeCode || e.Routing != routing.Server || !e.Shared {
		t.Fatalf("entry %+v", e)
	}
	if e.Integrity != fqdn.Integrity(e.Body) || e.Name.Hash != fqdn.Hash4(e.Integrity) {
		t.Fatalf("integrity %s / hash %s do not describe the body", e.Integrity, e.Name.Hash)
	}
	code := string(e.Body)
	for _, want := range []string{"// Built-in tool json:parse", "mcp.json.parse(args: { data: string })", "return await mcp.json.parse(args);"} {
		if !strings.Contains(code, want) {
			t.Errorf("stub lacks %q:\n%s", want, code)
		}
	}
	fs, _ := r.Builtin("filesystem:read_file")
	if fs.Routing != routing.Client {
		t.Errorf("filesystem:read_file routing %s, want client", fs.Routing)
	}
	if e.ContentType() != "application/typescript" || e.ETag() != `"`+e.Integrity+`"` {
		t.Errorf("content type %s, etag %s", e.ContentType(), e.ETag())
	}
}

func TestServerEntries(t *testing.T) {
	r := testRegistry(t, nil)
	stdio, ok := r.Server("serena")
	if !ok {
		t.Fatal("serena not published")
	}
	var m map[string]any
	if err := json.Unmarshal(stdio.Body, &m); err != nil {
		t.Fatal(err)
	}
	want := `{"description":"Code analysis","fqdn":"` + stdio.FQDN() + `","install":{"args":["@example/serena"],"command":"npx","envRequired":["A_KEY","B_KEY"]},"integrity":"` + stdio.Integrity + `","routing":"client","tools":[],"type":"stdio","warnings":["installed and run on your machine","requires keys: A_KEY, B_KEY"]}`
	if got, _ := fqdn.CanonicalJSON(m); string(got) != want {
		t.Errorf("stdio metadata\n%s\nwant\n%s", got, want)
	}
	if stdio.Name.Base() != "pml.mcp.serena.server" || stdio.ContentType() != "application/json" {
		t.Errorf("stdio entry %s %s", stdio.Name, stdio.ContentType())
	}
	if integrity, err := MetadataIntegrity(stdio.Body); err != nil || integrity != stdio.Integrity {
		t.Errorf("MetadataIntegrity = %s, %v; want %s", integrity, err, stdio.Integrity)
	}

	hosted, _ := r.ServerMetadata("tavily")
	if hosted.Type != TypeHTTP || hosted.Routing != routing.Server || hosted.ProxyTo != "https://api.example.test" ||
		len(hosted.EnvRequired) != 1 || hosted.Install != nil {
		t.Errorf("hosted metadata %+v (the proxy is only the origin: a path or query may hold a token)", hosted)
	}
	e, _ := r.Server("tavily")
	if integrity, err := MetadataIntegrity(e.Body); err != nil || integrity != e.Integrity || e.Name.Hash != fqdn.Hash4(integrity) {
		t.Errorf("hosted integrity %s (%v), entry %s %s", integrity, err, e.Integrity, e.Name)
	}
}

// Any change a package acts on is a new hash.
func TestServerHashFollowsMetadata(t *testing.T) {
	base := Server{Name: "x", Transport: "stdio", Command: "npx", Args: []string{"a"}}
	e1, _, err := serverEntry(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, changed := range []Server{
		{Name: "x", Transport: "stdio", Command: "npx", Args: []string{"b"}},
		{Name: "x", Transport: "stdio", Command: "node", Args: []string{"a"}},
		{Name: "x", Transport: "stdio", Command: "npx", Args: []string{"a"}, EnvRequired: []string{"K"}},
	} {
		e2, _, err := serverEntry(changed)
		if err != nil {
			t.Fatal(err)
		}
		if e2.Integrity == e1.Integrity {
			t.Errorf("%+v kept integrity %s", changed, e1.Integrity)
		}
	}
	again, _, _ := serverEntry(base)
	if again.Integrity != e1.Integrity || string(again.Body) != string(e1.Body) {
		t.Error("the same server gave another entry")
	}
}

func TestMetadataIntegrityRejectsGarbage(t *testing.T) {
	if _, err := MetadataIntegrity([]byte(`[1,2]`)); err == nil {
		t.Error("an array: want error")
	}
}

func TestGetCapability(t *testing.T) {
	st := openStore(t)
	r := testRegistry(t, st)
	ctx := context.Background()
	c := saveCap(t, st, acme, "fs", "read_json", "return 1", "")
	want, _ := fqdn.ForCode("acme", "web", "fs", "read_json", "return 1")

	e, err := r.Get(ctx, acme, mustParse(t, want.String()))
	if err != nil {
		t.Fatal(err)
	}
	if e.FQDN() != want.String() || string(e.Body) != "return 1" || e.Capability.ID != c.ID || e.Shared {
		t.Fatalf("entry %+v", e)
	}
	four, err := r.Get(ctx, acme, mustParse(t, want.Base()))
	if err != nil || four.FQDN() != want.String() {
		t.Fatalf("four-part lookup: %v %v", four.FQDN(), err)
	}

	wrong := want.WithHash(otherHash(want.Hash))
	_, err = r.Get(ctx, acme, wrong)
	var mm *HashMismatchError
	if !errors.As(err, &mm) || mm.Current.FQDN() != want.String() {
		t.Fatalf("wrong hash: %v", err)
	}
	if msg := mm.Error(); msg != "Hash '"+wrong.Hash+"' does not match current hash '"+want.Hash+"' for acme.web.fs.read_json" {
		t.Errorf("message %q", msg)
	}
	if _, err := r.Get(ctx, acme, mustParse(t, "unknown.thing.here.now.abcd")); !errors.Is(err, ErrNotFound) ||
		err.Error() != "MCP 'unknown.thing.here.now' not in registry: not in registry" {
		t.Errorf("unknown: %v", err)
	}
}

func otherHash(h string) string {
	if h == "0000" {
		return "0001"
	}
	return "0000"
}

// A newer version of a name is current; the old hash is a mismatch.
func TestVersions(t *testing.T) {
	st := openStore(t)
	r := testRegistry(t, st)
	ctx := context.Background()
	saveCap(t, st, acme, "cap", "sum", "return 1", "")
	saveCap(t, st, acme, "cap", "sum", "return 2", "")
	old, _ := fqdn.ForCode("acme", "web", "cap", "sum", "return 1")
	cur, _ := fqdn.ForCode("acme", "web", "cap", "sum", "return 2")
	e, err := r.Get(ctx, acme, cur.WithHash(""))
	if err != nil || e.FQDN() != cur.String() {
		t.Fatalf("current: %s %v", e.FQDN(), err)
	}
	if old.Hash != cur.Hash {
		var mm *HashMismatchError
		if _, err := r.Get(ctx, acme, old); !errors.As(err, &mm) {
			t.Fatalf("old version: %v", err)
		}
	}
	cat, err := r.List(ctx, acme, ListOptions{Type: TypeCode, Name: "cap:sum"})
	if err != nil || cat.Total != 1 || cat.Items[0].FQDN != cur.String() {
		t.Fatalf("catalog by name: %+v %v", cat, err)
	}
	cat, _ = r.List(ctx, acme, ListOptions{Type: TypeCode})
	if cat.Total != 3 { // two built-ins and the current sum
		t.Fatalf("catalog lists %d code entries, want 3: %+v", cat.Total, cat.Items)
	}
}

func TestTenantIsolation(t *testing.T) {
	st := openStore(t)
	r := testRegistry(t, st)
	ctx := context.Background()
	saveCap(t, st, acme, "cap", "private_one", "return 'p'", store.VisibilityPrivate)
	saveCap(t, st, acme, "cap", "org_one", "return 'o'", store.VisibilityOrg)
	saveCap(t, st, acme, "cap", "public_one", "return 'x'", store.VisibilityPublic)

	// sees: by FQDN and by qualified id; bare: by bare name, which never
	// reaches another org's capability, public or not.
	tests := []struct {
		viewer     store.Scope
		name       string
		sees, bare bool
	}{
		{acme, "private_one", true, true}, {acme, "org_one", true, true}, {acme, "public_one", true, true},
		{acmeAPI, "private_one", false, false}, {acmeAPI, "org_one", true, true}, {acmeAPI, "public_one", true, true},
		{globex, "private_one", false, false}, {globex, "org_one", false, false}, {globex, "public_one", true, false},
	}
	for _, tt := range tests {
		n := mustParse(t, "acme.web.cap."+tt.name)
		e, err := r.Get(ctx, tt.viewer, n)
		if tt.sees != (err == nil) {
			t.Errorf("%v get %s: %v", tt.viewer, tt.name, err)
		}
		if !tt.sees && !errors.Is(err, ErrNotFound) {
			t.Errorf("%v get %s: want a plain not found, got %v", tt.viewer, tt.name, err)
		}
		// A hidden entry does not even reveal its hash.
		if !tt.sees {
			var mm *HashMismatchError
			if _, err := r.Get(ctx, tt.viewer, n.WithHash("0000")); errors.As(err, &mm) {
				t.Errorf("%v: hash_mismatch leaks %s", tt.viewer, mm.Current.FQDN())
			}
		}
		_, resolved, _ := r.Resolve(ctx, tt.viewer, "cap:"+tt.name)
		if resolved != tt.bare {
			t.Errorf("%v resolve cap:%s = %v", tt.viewer, tt.name, resolved)
		}
		q, resolved, err := r.Resolve(ctx, tt.viewer, "acme.web.cap:"+tt.name)
		if resolved != tt.sees || err != nil || resolved && q.FQDN() != e.FQDN() {
			t.Errorf("%v resolve acme.web.cap:%s = %v %v", tt.viewer, tt.name, resolved, err)
		}
		if tt.sees {
			// Pinned to the current hash it resolves; to another, nothing.
			if _, ok, _ := r.Resolve(ctx, tt.viewer, "acme.web.cap:"+tt.name+"."+e.Name.Hash); !ok {
				t.Errorf("%v: pinned current hash does not resolve", tt.viewer)
			}
			if _, ok, _ := r.Resolve(ctx, tt.viewer, "acme.web.cap:"+tt.name+"."+otherHash4(e.Name.Hash)); ok {
				t.Errorf("%v: a stale pinned hash resolves", tt.viewer)
			}
		}
		if tt.sees && e.Shared != (tt.name == "public_one") {
			t.Errorf("%s shared=%v", tt.name, e.Shared)
		}
	}
	cat, err := r.List(ctx, globex, ListOptions{Type: TypeCode})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range cat.Items {
		if strings.Contains(it.FQDN, "private_one") || strings.Contains(it.FQDN, "org_one") {
			t.Errorf("globex lists %s", it.FQDN)
		}
	}
}

// The viewer's own capability wins over another project's of the same name.
func TestResolvePrefersOwnScope(t *testing.T) {
	st := openStore(t)
	r := testRegistry(t, st)
	saveCap(t, st, acmeAPI, "cap", "greet", "return 'api'", store.VisibilityOrg)
	saveCap(t, st, acme, "cap", "greet", "return 'web'", "")
	e, ok, err := r.Resolve(context.Background(), acme, "cap:greet")
	if err != nil || !ok || string(e.Body) != "return 'web'" {
		t.Fatalf("resolve: %s %v %v", e.Body, ok, err)
	}
	e, ok, _ = r.Resolve(context.Background(), acmeAPI, "cap:greet")
	if !ok || string(e.Body) != "return 'api'" {
		t.Fatalf("resolve from api: %s", e.Body)
	}
}

// Tool namespaces never resolve to a capability: a tenant cannot stand in
// for a real tool.
func TestReservedNamespaces(t *testing.T) {
	st := openStore(t)
	r := testRegistry(t, st)
	saveCap(t, st, acme, "json", "parse", "return 'fake'", store.VisibilityPublic)
	saveCap(t, st, acme, "filesystem", "read_file", "return 'fake'", store.VisibilityPublic)
	for _, id := range []string{"json:parse", "filesystem:read_file", "serena:x", "shell:exec"} {
		if _, ok, _ := r.Resolve(context.Background(), acme, id); ok {
			t.Errorf("%s resolved to a capability", id)
		}
	}
	// Built-in (std and client), hosted, catalog, and the routing rules'
	// namespaces, in any letter case.
	for _, ns := range []string{"json", "filesystem", "serena", "tavily", "git", "docker", "collections", "Filesystem", "SHELL"} {
		if err := r.CheckName(ns, "x"); pmlerr.CodeOf(err, "") != pmlerr.NamespaceReserved {
			t.Errorf("CheckName(%s) = %v, want %s", ns, err, pmlerr.NamespaceReserved)
		}
	}
	for _, bad := range [][2]string{{"a.b", "x"}, {"acme.web.cap", "x"}, {"", "x"}, {"ok", "sp ace"}, {"ok", "a.b"}} {
		if err := r.CheckName(bad[0], bad[1]); pmlerr.CodeOf(err, "") != pmlerr.InvalidRequest {
			t.Errorf("CheckName%v = %v, want %s", bad, err, pmlerr.InvalidRequest)
		}
	}
	if err := r.CheckName("fs", "read_json"); err != nil {
		t.Error(err)
	}
}

func TestCatalogPagingAndTypes(t *testing.T) {
	st := openStore(t)
	r := testRegistry(t, st)
	ctx := context.Background()
	for i := range 5 {
		saveCap(t, st, acme, "cap", "c"+string(rune('a'+i)), "return "+string(rune('0'+i)), "")
	}
	all, err := r.List(ctx, acme, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if all.Total != 9 || len(all.Items) != 9 || all.Page != 1 || all.Limit != DefaultLimit {
		t.Fatalf("all: %+v", all)
	}
	var seen []string
	for page := 1; page <= 4; page++ {
		p, err := r.List(ctx, acme, ListOptions{Page: page, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != 9 {
			t.Fatalf("page %d total %d", page, p.Total)
		}
		for _, it := range p.Items {
			seen = append(seen, it.FQDN)
		}
	}
	if len(seen) != 9 {
		t.Fatalf("pages gave %d items", len(seen))
	}
	for i, it := range all.Items {
		if seen[i] != it.FQDN {
			t.Fatalf("page order differs at %d: %s vs %s", i, seen[i], it.FQDN)
		}
	}
	for typ, want := range map[Type]int{TypeStdio: 1, TypeHTTP: 1, TypeCode: 7} {
		c, err := r.List(ctx, acme, ListOptions{Type: typ})
		if err != nil || c.Total != want {
			t.Errorf("type %s: %d items (%v), want %d", typ, c.Total, err, want)
		}
		for _, it := range c.Items {
			if it.Type != typ {
				t.Errorf("type %s lists %+v", typ, it)
			}
		}
	}
	if c, _ := r.List(ctx, acme, ListOptions{Limit: 100000}); c.Limit != MaxLimit {
		t.Errorf("limit %d, want the cap %d", c.Limit, MaxLimit)
	}
	if c, _ := r.List(ctx, acme, ListOptions{Name: "serena"}); c.Total != 1 || c.Items[0].Type != TypeStdio {
		t.Errorf("name=serena: %+v", c)
	}
}

func TestParseType(t *testing.T) {
	for in, want := range map[string]Type{"": "", "code": TypeCode, "deno": TypeCode, "stdio": TypeStdio, "http": TypeHTTP} {
		if got, err := ParseType(in); err != nil || got != want {
			t.Errorf("ParseType(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseType("python"); err == nil {
		t.Error("ParseType(python): want error")
	}
}

func TestDefaultAction(t *testing.T) {
	hash := "0123456789abcdef"
	tests := map[string]string{
		"Sum two numbers":           "sum_two_numbers",
		"  read the JSON config!! ": "read_the_json_config",
		"":                          "run_01234567",
		"???":                       "run_01234567",
		"2 files to merge":          "run_2_files_to_merge",
		"Éléphant rose":             "l_phant_rose",
		strings.Repeat("word ", 30): "word_word_word_word_word_word_word_word_word",
		strings.Repeat("x", 100):    strings.Repeat("x", maxActionLen),
	}
	for in, want := range tests {
		got := DefaultAction(in, hash)
		if got != want {
			t.Errorf("DefaultAction(%q) = %q, want %q", in, got, want)
		}
		if len(got) > maxActionLen+4 {
			t.Errorf("DefaultAction(%q) too long: %d", in, len(got))
		}
		if err := (fqdn.Name{Org: "o", Project: "p", Namespace: DefaultNamespace, Action: got}).Validate(); err != nil {
			t.Errorf("DefaultAction(%q) = %q is not an FQDN part: %v", in, got, err)
		}
	}
}

func TestVisible(t *testing.T) {
	c := store.Capability{Scope: acme, Visibility: store.VisibilityProject}
	if !Visible(acme, c) || Visible(acmeAPI, c) || Visible(globex, c) {
		t.Error("project visibility is the project's own")
	}
}

func otherHash4(h string) string {
	if h == "0000" {
		return "ffff"
	}
	return "0000"
}

// Qualified ids: only "org.project.ns:action[.hash4]" parses; a built-in's
// FQDN written that way is not a capability.
func TestQualified(t *testing.T) {
	for id, want := range map[string]string{
		"acme.web.cap:sum":        "acme.web.cap.sum",
		"acme.web.cap:sum.ab12":   "acme.web.cap.sum.ab12",
		"cap:sum":                 "",
		"acme.cap:sum":            "",
		"acme.web.cap:sum.AB12":   "",
		"acme.web.cap:sum.ab12.x": "",
		"acme.web.cap:":           "",
		"a.b.c.d:e":               "",
		"acme.web.cap:sum:x":      "",
		"acme.web.c p:sum":        "",
		"acme..cap:sum":           "",
	} {
		n, ok := Qualified(id)
		if got := map[bool]string{true: n.String()}[ok]; got != want {
			t.Errorf("Qualified(%q) = %q, want %q", id, got, want)
		}
	}
	st := openStore(t)
	r := testRegistry(t, st)
	if _, ok, err := r.Resolve(context.Background(), acme, "pml.std.json:parse"); ok || err != nil {
		t.Fatalf("a built-in resolves as a qualified capability: %v %v", ok, err)
	}
}

// Tools and warnings are outside a server entry's integrity; every other
// member is inside it.
func TestMetadataIntegrityIgnoresToolsAndWarnings(t *testing.T) {
	r := testRegistry(t, nil)
	e, _ := r.Server("serena")
	var m map[string]any
	if err := json.Unmarshal(e.Body, &m); err != nil {
		t.Fatal(err)
	}
	m["tools"] = []ServerTool{{Name: "find", Description: "Find a symbol."}}
	m["warnings"] = []string{"failed to start: boom"}
	body, _ := json.Marshal(m)
	if got, err := MetadataIntegrity(body); err != nil || got != e.Integrity {
		t.Fatalf("with tools and warnings: %s %v, want %s", got, err, e.Integrity)
	}
	m["description"] = "Something else"
	body, _ = json.Marshal(m)
	if got, _ := MetadataIntegrity(body); got == e.Integrity {
		t.Fatal("a changed description kept the integrity")
	}
}
