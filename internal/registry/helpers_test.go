package registry

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/sqlite"
	"github.com/pml-go/pml/internal/tools"
)

var (
	acme    = store.Scope{Org: "acme", Project: "web"}
	acmeAPI = store.Scope{Org: "acme", Project: "api"}
	globex  = store.Scope{Org: "globex", Project: "web"}
)

func openStore(t testing.TB) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "registry.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// testRegistry has two built-ins, a catalog stdio server, a hosted http
// server and the default rules.
func testRegistry(t testing.TB, st store.Store) *Registry {
	t.Helper()
	r, err := New(Options{
		Store: st,
		Builtins: []tools.Info{
			{ID: "json:parse", Description: "Parse JSON text.", InputSchema: []byte(`{"type":"object","properties":{"data":{"type":"string"}},"required":["data"]}`)},
			{ID: "filesystem:read_file", Description: "Read a file."},
		},
		Rules: routing.Default(),
		Servers: []Server{
			{Name: "serena", Transport: "stdio", Command: "npx", Args: []string{"@example/serena"}, EnvRequired: []string{"B_KEY", "A_KEY"}, Description: "Code analysis"},
			{Name: "tavily", Hosted: true, Transport: "http", URL: "https://api.example.test/mcp/secret-path?token=x", EnvRequired: []string{"TAVILY_API_KEY"}, Description: "Web search"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func saveCap(t testing.TB, st store.Store, sc store.Scope, ns, action, code string, vis store.Visibility) store.Capability {
	t.Helper()
	c, err := st.SaveCapability(context.Background(), store.Capability{Scope: sc, Namespace: ns, Action: action,
		Code: code, Routing: "server", Visibility: vis, Description: action + " it"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
