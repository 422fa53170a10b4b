package sandbox

import (
	"context"
	"sync"
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

func (c *callContext) materialize() context.Context {
	c.once.Do(func() { c.real, c.cancel = context.WithDeadline(c.Context, c.deadline) })
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
