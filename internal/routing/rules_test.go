package routing

import (
	"strings"
	"testing"
)

func TestRouteMostSpecificWins(t *testing.T) {
	r := Rules{
		Client:  []string{"filesystem", "git:push", "mixed:*"},
		Server:  []string{"json", "git", "mixed:read", "web:*"},
		Default: Client,
	}
	cases := map[string]Side{
		"filesystem:read_file": Client,
		"json:parse":           Server,
		"git:log":              Server, // ns pattern on the server side
		"git:push":             Client, // ns:action beats ns
		"mixed:read":           Server, // ns:action beats ns:*
		"mixed:write":          Client,
		"web:search":           Server,
		"unknown:thing":        Client, // default
	}
	for tool, want := range cases {
		if got := r.Route(tool); got != want {
			t.Errorf("Route(%q) = %s, want %s", tool, got, want)
		}
	}
}

func TestTieGoesToClient(t *testing.T) {
	r := Rules{Client: []string{"x"}, Server: []string{"x:*"}}
	if got := r.Route("x:a"); got != Client {
		t.Fatalf("tie routed to %s", got)
	}
}

func TestDefaultServer(t *testing.T) {
	r := Rules{Default: Server}
	if r.Route("a:b") != Server {
		t.Fatal("default server not applied")
	}
}

func TestResolve(t *testing.T) {
	r := Default()
	if got := r.Resolve(nil); got != Server {
		t.Fatalf("no tools: %s", got)
	}
	if got := r.Resolve([]string{"json:parse", "math:add"}); got != Server {
		t.Fatalf("server only: %s", got)
	}
	mixed := []string{"json:parse", "filesystem:read_file"}
	if got := r.Resolve(mixed); got != Client {
		t.Fatalf("mixed: %s", got)
	}
	if ct := r.ClientTools(mixed); len(ct) != 1 || ct[0] != "filesystem:read_file" {
		t.Fatalf("client tools: %v", ct)
	}
}

func TestOverrideMovesPatterns(t *testing.T) {
	r := Default().Override(Rules{Server: []string{"git"}, Client: []string{"json:parse"}})
	if r.Route("git:log") != Server {
		t.Fatal("override to server not applied")
	}
	if r.Route("json:parse") != Client || r.Route("json:stringify") != Server {
		t.Fatal("override to client not applied")
	}
	if r.Route("filesystem:read_file") != Client {
		t.Fatal("untouched default changed")
	}
}

func TestWithServerKeepsExplicitClient(t *testing.T) {
	r := Default().WithServer("tavily", "filesystem")
	if r.Route("tavily:search") != Server {
		t.Fatal("hosted server not server-routed")
	}
	if r.Route("filesystem:read_file") != Client {
		t.Fatal("explicit client rule overridden by hosting")
	}
}

func TestParseValidates(t *testing.T) {
	for _, bad := range []string{
		`{"client":["fs:*x"]}`, `{"client":[""]}`, `{"server":["a b"]}`, `{"server":["*"]}`,
		`{"default":"cloud"}`, `{"client":["a:b:c"]}`, `not json`,
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s) accepted", bad)
		}
	}
	r, err := Parse([]byte(`{"client":["fs:*","sh:exec"],"server":["json"],"default":"server"}`))
	if err != nil || r.Default != Server {
		t.Fatalf("valid rules rejected: %v", err)
	}
}

func TestJSONETagStable(t *testing.T) {
	b1, e1 := Default().JSON()
	b2, e2 := Default().JSON()
	if string(b1) != string(b2) || e1 != e2 || !strings.HasPrefix(e1, `"`) {
		t.Fatalf("unstable: %s %s", e1, e2)
	}
	_, e3 := Default().WithServer("tavily").JSON()
	if e3 == e1 {
		t.Fatal("etag did not change with rules")
	}
}

// Namespaces served on this machine are the client's over any pattern,
// and never part of the served document.
func TestWithLocalPinsClient(t *testing.T) {
	plain := Rules{Server: []string{"json", "fx:run", "fx"}, Default: Server}
	r := plain.WithLocal([]string{"fx", "json"})
	for tool, want := range map[string]Side{"fx:run": Client, "fx:other": Client, "json:parse": Client, "math:add": Server} {
		if got := r.Route(tool); got != want {
			t.Errorf("Route(%q) = %s, want %s", tool, got, want)
		}
	}
	body, etag := r.JSON()
	plainBody, plainETag := plain.JSON()
	if string(body) != string(plainBody) || etag != plainETag {
		t.Fatalf("served document %s, want %s", body, plainBody)
	}
}
