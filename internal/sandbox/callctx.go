package sandbox

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// callContext is the context of a call made on the VM goroutine: the run's
// context with the RPC deadline. context.WithTimeout would register a child
// and start a timer per call, a tenth of a whole round trip, while most
// CallFuncs (the built-in tools) never look at Done or Err; so the real
// deadline context is made only when one does.
type callContext struct {
	context.Context // the run's, with the call's position
	deadline        time.Time

	once   sync.Once
	real   context.Context // made by the first Done or Err, or canceled by end
	cancel context.CancelFunc
	// derived says real is the deadline context made from Context: from
	// then on it answers Value too. A context derived from this one (an
	// HTTP request's, an MCP call's) then finds real's canceler there and
	// registers as its child; otherwise the context package would start a
	// goroutine per derived context to watch Done, one more per call and
	// per parked execution.
	derived atomic.Bool
}

func newCallContext(parent context.Context, timeout time.Duration) *callContext {
	return &callContext{Context: parent, deadline: time.Now().Add(timeout)}
}

func (c *callContext) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *callContext) Done() <-chan struct{} { return c.materialize().Done() }

func (c *callContext) Err() error { return c.materialize().Err() }

func (c *callContext) Value(key any) any {
	if c.derived.Load() {
		return c.real.Value(key)
	}
	return c.Context.Value(key)
}

func (c *callContext) materialize() context.Context {
	c.once.Do(func() {
		c.real, c.cancel = context.WithDeadline(c.Context, c.deadline)
		c.derived.Store(true)
	})
	return c.real
}

// end cancels the context once the call returned. A goroutine the CallFunc
// left behind that asks afterwards finds it canceled, as with WithTimeout.
func (c *callContext) end() {
	c.once.Do(func() { c.real = canceledContext })
	if c.cancel != nil {
		c.cancel()
	}
}

// canceledContext is what a callContext nobody asked about becomes when its
// call ends. It never changes.
var canceledContext = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()
