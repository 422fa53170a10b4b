//go:build linux

package scale_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/pgtest"
	"github.com/pml-go/pml/internal/wire"
)

// Sequential requests of one client go to the replicas in turn, and each
// replica's own metrics count exactly the executions the balancer sent it.
func TestReplicasRoundRobin(t *testing.T) {
	t.Parallel()
	d := deploy(t, pgtest.Start(t), 2)
	a, b := d.replicas[0], d.replicas[1]
	before := []int{a.serverSuccesses(t), b.serverSuccesses(t)}

	c := newMCPClient(d.lb.url, d.key)
	defer c.close()
	if _, err := c.connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	start := len(d.lb.sequence())
	const n = 10
	for i := range n {
		ans, err := c.execute(t.Context(), serverCode)
		if err != nil || ans.Status != wire.StatusSuccess || string(ans.Result) != "42" {
			t.Fatalf("execute %d: %v %s %s", i, err, ans, ans.Result)
		}
	}
	seq := d.lb.sequence()[start:]
	routed := []int{0, 0}
	for i, backend := range seq {
		if i > 0 && backend == seq[i-1] {
			t.Fatalf("two executes in a row on %s: %v", d.replicas[backend].name, seq)
		}
		routed[backend]++
	}
	for i, r := range d.replicas {
		if got := r.serverSuccesses(t) - before[i]; got != routed[i] {
			t.Errorf("%s ran %d executions, the balancer sent it %d", r.name, got, routed[i])
		}
	}
	t.Logf("executes per replica: %s=%d %s=%d", a.name, routed[0], b.name, routed[1])
}

// Concurrent clients spread over both replicas, and every request succeeds.
func TestReplicasConcurrentClients(t *testing.T) {
	t.Parallel()
	d := deploy(t, pgtest.Start(t), 2)
	const clients, each = 6, 10
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Go(func() {
			c := newMCPClient(d.lb.url, d.key)
			defer c.close()
			for range each {
				ans, err := c.execute(t.Context(), serverCode)
				if err != nil || ans.Status != wire.StatusSuccess {
					errs <- fmt.Errorf("execute: %v %s", err, ans)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	total := 0
	for _, r := range d.replicas {
		n := r.serverSuccesses(t)
		total += n
		if n < clients*each/4 {
			t.Errorf("%s served only %d of %d executions", r.name, n, clients*each)
		}
		t.Logf("%s: %d executions", r.name, n)
	}
	if total != clients*each {
		t.Errorf("replicas ran %d executions, clients sent %d", total, clients*each)
	}
	traces, _ := d.rows(t)
	if traces != clients*each {
		t.Errorf("%d traces stored for %d executions", traces, clients*each)
	}
}

// What one replica stores, the other sees: a key created after both
// started, and the client tools a package reported through one of them.
func TestReplicasShareState(t *testing.T) {
	t.Parallel()
	d := deploy(t, pgtest.Start(t), 2)
	a, b := d.replicas[0], d.replicas[1]
	ctx := t.Context()

	// The key was created in the shared database after both replicas started:
	// neither has it cached, both accept it.
	for _, r := range d.replicas {
		c := newMCPClient(r.url, d.key)
		ans, err := c.execute(ctx, serverCode)
		c.close()
		if err != nil || ans.Status != wire.StatusSuccess {
			t.Fatalf("%s with the new key: %v %s", r.name, err, ans)
		}
	}

	// The package reports its tools to replica a; discover on b finds them.
	tool := store.ClientTool{ID: "scaleprobe:only_here", Description: "a tool that exists only on this client machine"}
	if err := gatewayclient.NewRemote(a.url, d.key, "").ReportTools(ctx, "client-1", []store.ClientTool{tool}); err != nil {
		t.Fatalf("report client tools to %s: %v", a.name, err)
	}
	onB := gatewayclient.NewRemote(b.url, d.key, "")
	defer onB.Close()
	found, err := onB.Discover(ctx, wire.DiscoverRequest{Name: tool.ID})
	if err != nil {
		t.Fatalf("discover on %s: %v", b.name, err)
	}
	if len(found.Tools) != 1 || found.Tools[0].ID != tool.ID || found.Tools[0].Routing != "client" {
		t.Fatalf("discover on %s: %+v", b.name, found)
	}

	// A trace written by a run on a is readable through the database b uses.
	c := newMCPClient(a.url, d.key)
	defer c.close()
	ans, err := c.execute(ctx, serverCode)
	if err != nil || ans.TraceID == "" {
		t.Fatalf("execute on %s: %v %s", a.name, err, ans)
	}
	if _, err := d.store.TraceByID(ctx, tenant, ans.TraceID); err != nil {
		t.Fatalf("trace %s of a run on %s: %v", ans.TraceID, a.name, err)
	}
}

// Two replicas starting at the same moment on a fresh database: one applies
// the migrations under the advisory lock, the other waits and finds nothing
// to do; both serve. Several rounds, since the race is timing-dependent.
func TestReplicasStartTogetherOnFreshDatabase(t *testing.T) {
	t.Parallel()
	for round := range 3 {
		dsn := pgtest.Start(t)
		replicas := startReplicas(t, 2, dsn)
		for _, r := range replicas {
			resp, err := http.Get(r.url + "/healthz")
			if err != nil {
				t.Fatalf("round %d: %s: %v", round, r.name, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("round %d: %s /healthz: %s\n%s", round, r.name, resp.Status, r.log)
			}
		}
		applied, distinct := migrationRows(t, dsn)
		if applied == 0 || applied != distinct {
			t.Fatalf("round %d: schema_migrations has %d rows for %d versions", round, applied, distinct)
		}
		for _, r := range replicas {
			r.stop()
		}
	}
}

func migrationRows(t *testing.T, dsn string) (rows, versions int) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT version) FROM schema_migrations`).Scan(&rows, &versions); err != nil {
		t.Fatal(err)
	}
	return rows, versions
}
