//go:build linux

package scale_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/postgres"
)

// tenant is the scope of the keys the tests create.
var tenant = store.Scope{Org: "acme", Project: "web"}

// serverCode is a server-only execution: two built-in tool calls, a stored
// trace; what the load test measures.
const serverCode = `const p = await mcp.json.parse({ data: '{"n": 40}' });
return await mcp.math.add({ a: p.n, b: 2 });`

// deployment is n replicas on one PostgreSQL database behind a balancer.
type deployment struct {
	dsn      string
	replicas []*replica
	lb       *balancer
	key      string
	store    store.Store // the test's own view of the database, for counting rows
}

// deploy starts n replicas at once on the database dsn (fresh: they race
// for the migrations), a balancer, and creates a key with the CLI.
func deploy(t testing.TB, dsn string, n int, extra ...string) *deployment {
	t.Helper()
	d := &deployment{dsn: dsn, replicas: startReplicas(t, n, dsn, extra...)}
	d.lb = startBalancer(t, d.replicas...)
	d.key = createKey(t, dsn)
	st, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	d.store = st
	return d
}

// createKey runs `pml gateway key create`, which prints the key once.
func createKey(t testing.TB, dsn string) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), pmlBin, "gateway", "key", "create",
		"--db", dsn, "--org", tenant.Org, "--project", tenant.Project).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("pml gateway key create: %v\n%s", err, stderr)
	}
	key := strings.TrimSpace(string(out))
	if !strings.HasPrefix(key, "pml_") {
		t.Fatalf("pml gateway key create printed %q", out)
	}
	return key
}

// rows counts what must never be lost: the tenant's traces and capabilities.
func (d *deployment) rows(t testing.TB) (traces, capabilities int) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	_, traces, err := d.store.ListTraces(ctx, store.TraceFilter{Scope: tenant, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, capabilities, err = d.store.ListCapabilities(ctx, store.CapabilityFilter{Viewer: tenant, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	return traces, capabilities
}

// traces returns the ids of the tenant's stored traces, and their count.
func (d *deployment) traces(t testing.TB) (map[string]bool, int) {
	t.Helper()
	all, total, err := d.store.ListTraces(context.WithoutCancel(t.Context()), store.TraceFilter{Scope: tenant})
	if err != nil {
		t.Fatal(err)
	}
	ids := make(map[string]bool, len(all))
	for _, tr := range all {
		ids[tr.ID] = true
	}
	return ids, total
}
