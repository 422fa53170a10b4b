//go:build linux

package scale_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/store/pgtest"
	"github.com/pml-go/pml/internal/wire"
)

// loadResult is what the clients of a fault test saw.
type loadResult struct {
	mu           sync.Mutex
	traceIDs     []string
	capabilities []wire.CapabilityRef
	retries      int
	errs         []error
}

func (l *loadResult) add(a wire.Answer, retries int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.retries += retries
	switch {
	case err != nil:
		l.errs = append(l.errs, err)
	default:
		l.traceIDs = append(l.traceIDs, a.TraceID)
		if a.Capability != nil {
			l.capabilities = append(l.capabilities, *a.Capability)
		}
	}
}

// Kill one replica (SIGKILL) while clients execute through the balancer.
// Clients that retry land on the other replica; every execution they were
// told succeeded has its trace in the database, and nothing stored before
// the kill is gone.
func TestFaultKillReplicaUnderLoad(t *testing.T) {
	t.Parallel()
	d := deploy(t, pgtest.Start(t), 2)
	victim, survivor := d.replicas[0], d.replicas[1]
	tracesBefore, capsBefore := d.rows(t)

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var (
		res       loadResult
		stop      atomic.Bool
		afterKill atomic.Int64
		killed    atomic.Bool
		wg        sync.WaitGroup
	)
	const clients = 8
	for range clients {
		wg.Go(func() {
			c := newMCPClient(d.lb.url, d.key)
			defer c.close()
			for !stop.Load() {
				a, retries, err := c.executeRetrying(ctx, serverCode)
				res.add(a, retries, err)
				if err != nil {
					return
				}
				if killed.Load() {
					afterKill.Add(1)
				}
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	victim.kill(t)
	killed.Store(true)
	time.Sleep(1500 * time.Millisecond)
	stop.Store(true)
	wg.Wait()

	for _, err := range res.errs {
		t.Errorf("a client gave up: %v", err)
	}
	if afterKill.Load() == 0 {
		t.Fatal("no execution succeeded after the kill")
	}
	if d.lb.backends[0].failed.Load() == 0 && res.retries == 0 {
		t.Fatal("the kill was not noticed by any request: the fault was not exercised")
	}

	// Every trace a client was given is stored, and none older went missing.
	stored, tracesAfter := d.traces(t)
	for _, id := range res.traceIDs {
		if !stored[id] {
			t.Errorf("trace %s of a successful execution is not stored", id)
		}
	}
	if tracesAfter < tracesBefore+len(res.traceIDs) {
		t.Errorf("traces: %d before, %d successful executions, %d after", tracesBefore, len(res.traceIDs), tracesAfter)
	}
	_, capsAfter := d.rows(t)
	if capsAfter < capsBefore {
		t.Errorf("capabilities: %d before the kill, %d after", capsBefore, capsAfter)
	}
	for _, c := range res.capabilities {
		if _, err := d.store.CapabilityByID(context.WithoutCancel(ctx), c.ID); err != nil {
			t.Errorf("capability %s (%s) of a successful execution: %v", c.ID, c.FQDN, err)
		}
	}
	t.Logf("%d executions (%d after the kill, all on %s), %d retried attempts, %d requests answered 502 by the balancer; traces %d -> %d, capabilities %d -> %d",
		len(res.traceIDs), afterKill.Load(), survivor.name, res.retries, d.lb.backends[0].failed.Load(),
		tracesBefore, tracesAfter, capsBefore, capsAfter)
}
