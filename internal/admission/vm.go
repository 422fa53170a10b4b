package admission

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/tools"
)

// ticket is one admitted execution: its execution place, and its running
// place while any of its VMs (the execution's own, and those of capabilities
// it calls) may run code.
type ticket struct {
	c      *Controller
	tenant string

	mu        sync.Mutex
	active    int  // VMs of the execution not waiting on a call
	holding   bool // holds a running place
	acquiring bool // one of its VMs is waiting for one
	done      bool
}

// enter marks one more VM of the execution as able to run, taking a running
// place when it is the first.
func (t *ticket) enter(ctx context.Context, cl class) error {
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return nil
	}
	t.active++
	if t.active > 1 || t.holding || t.acquiring {
		t.mu.Unlock()
		return nil
	}
	t.acquiring = true
	t.mu.Unlock()
	err := t.c.acquireRunning(ctx, t.tenant, cl)
	t.mu.Lock()
	t.acquiring = false
	if err != nil {
		t.active--
		t.mu.Unlock()
		return err
	}
	if t.done || t.active == 0 { // no longer wanted
		t.mu.Unlock()
		t.c.releaseRunning(t.tenant)
		return nil
	}
	t.holding = true
	t.mu.Unlock()
	return nil
}

// leave marks one VM of the execution as waiting, giving the running place
// back when none is left able to run.
func (t *ticket) leave() {
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return
	}
	t.active--
	release := t.active == 0 && t.holding
	if release {
		t.holding = false
	}
	t.mu.Unlock()
	if release {
		t.c.releaseRunning(t.tenant)
	}
}

// finish gives every place of the execution back. Calls still under way in
// abandoned goroutines find it done and take nothing more.
func (t *ticket) finish() {
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return
	}
	t.done = true
	holding := t.holding
	t.holding = false
	t.mu.Unlock()
	if holding {
		t.c.releaseRunning(t.tenant)
	}
	t.c.releaseExecution(t.tenant)
}

type ticketKey struct{}

// VM is the admission of one sandbox VM: an execution's own, or a nested
// one (a capability it calls) of the execution found in the context.
type VM struct {
	t      *ticket
	nested bool
}

// Enter admits a VM about to run code for tenant. In a context that carries
// an execution this controller admitted (a capability called by running
// code), the VM joins that execution and only needs a running place, ahead
// of new work. Otherwise it is a new execution: it needs an execution place
// (queueing at most QueueWait) and then a running place (at most
// StartWait). Refusals are OVERLOADED errors with retry_after_ms.
//
// The returned context carries the execution for nested VMs: pass it to
// sandbox.Run. Call Exit when the VM is done.
func (c *Controller) Enter(ctx context.Context, tenant string) (context.Context, *VM, error) {
	if t, ok := ctx.Value(ticketKey{}).(*ticket); ok && t.c == c {
		if err := t.enter(ctx, resume); err != nil {
			return ctx, nil, err
		}
		return ctx, &VM{t: t, nested: true}, nil
	}
	t, err := c.admit(ctx, tenant)
	if err != nil {
		return ctx, nil, err
	}
	if err := t.enter(ctx, start); err != nil {
		t.finish()
		return ctx, nil, err
	}
	return context.WithValue(ctx, ticketKey{}, t), &VM{t: t}, nil
}

// Exit ends the VM: a nested one gives its share of the running place back,
// an execution's own VM every place of the execution.
func (v *VM) Exit() {
	if v.nested {
		v.t.leave()
		return
	}
	v.t.finish()
}

// Wrap returns the VM's mcp bridge: while a call of the VM is in flight its
// code waits, so the execution's running place goes to other work; before
// the code gets the call's result back, the place is taken again (ahead of
// new work). A VM that cannot get it back before the call's context ends
// is halted with OVERLOADED.
func (v *VM) Wrap(call tools.CallFunc) tools.CallFunc {
	// mu orders this VM's transitions: calls in flight together start and
	// end on different goroutines.
	var mu sync.Mutex
	inflight := 0
	return func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		inflight++
		if inflight == 1 {
			v.t.leave()
		}
		mu.Unlock()
		out, err := call(ctx, tool, args)
		mu.Lock()
		inflight--
		var back error
		if inflight == 0 {
			back = v.t.enter(ctx, resume)
		}
		mu.Unlock()
		if back != nil {
			return nil, &sandbox.HaltError{Err: v.t.c.refuse(ReasonWait, "running",
				"no running place came free before the call's deadline, so the code cannot go on (%v)", back)}
		}
		return out, err
	}
}
