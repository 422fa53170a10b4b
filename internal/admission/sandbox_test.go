package admission

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/testfixture"
)

// Real sandbox runs: with one running place, a run parked on a tool leaves
// it to the next run, and gets it back to finish.
func TestParkedRunLeavesItsRunningPlace(t *testing.T) {
	c := small(Limits{MaxExecutions: 4, MaxRunning: 1, StartWait: time.Minute})
	parked := make(chan struct{})
	release := make(chan struct{})
	tool := func(ctx context.Context, name string, _ json.RawMessage) (json.RawMessage, error) {
		if name == "t:park" {
			close(parked)
			<-release
		}
		return json.RawMessage(`"ok"`), nil
	}
	run := func(code string) (string, error) {
		ctx, vm, err := c.Enter(context.Background(), "x")
		if err != nil {
			return "", err
		}
		defer vm.Exit()
		res, err := sandbox.Run(ctx, "(async function (args) {\n"+code+"\n})", nil, vm.Wrap(tool), sandbox.Limits{})
		return string(res.Value), err
	}
	first := make(chan error, 1)
	go func() {
		out, err := run(`return await mcp.t.park({})`)
		if err == nil && out != `"ok"` {
			err = errors.New("result " + out)
		}
		first <- err
	}()
	<-parked
	wantStats(t, c, 1, 0, 0)
	// The only running place is free: a second run completes meanwhile.
	if out, err := run(`const a = await mcp.t.x({}); const b = await mcp.t.y({}); return a + b`); err != nil || out != `"okok"` {
		t.Fatalf("second run: %s %v", out, err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	wantStats(t, c, 0, 0, 0)
}

// A VM that cannot get its running place back before its call's context
// ends stops, and its places stay consistent.
func TestNoPlaceBackHaltsTheVM(t *testing.T) {
	c := small(Limits{MaxExecutions: 4, MaxRunning: 1})
	ctxA, a := enter(t, c, "x")
	callCtx, cancel := context.WithCancel(ctxA)
	errs := make(chan error, 1)
	go func() {
		_, err := a.Wrap(func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})(callCtx, "t:t", nil)
		errs <- err
	}()
	testfixture.WaitFor(t, "a's call in flight", func() bool { return c.Stats().Running == 0 })
	_, b := enter(t, c, "x") // takes the place
	cancel()
	var halt *sandbox.HaltError
	err := <-errs
	if !errors.As(err, &halt) {
		t.Fatalf("want a halt, got %v", err)
	}
	wantOverloaded(t, halt.Err, "running")
	wantStats(t, c, 2, 1, 0)
	b.Exit()
	a.Exit()
	wantStats(t, c, 0, 0, 0)
}
