package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/wire"
)

// reports collects what a wire.Progress is told, as "done/total tool".
type reports struct {
	mu  sync.Mutex
	got []string
}

func (r *reports) progress(_ context.Context, done, total int, tool string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, fmt.Sprintf("%d/%d %s", done, total, tool))
}

// Each finished call is reported once, in order, with the plan's call count
// only where the code can make no other number of calls; a failed call
// counts, as it finished.
func TestRunReportsProgressPerCall(t *testing.T) {
	cases := map[string]struct {
		code string
		want []string
	}{
		"straight": {`await mcp.a.x({}); try { await mcp.b.fail({}) } catch (e) {} return await mcp.c.z({})`,
			[]string{"1/3 a:x", "2/3 b:fail", "3/3 c:z"}},
		"loop": {`for (const i of [1, 2]) { await mcp.a.x({i}) } return 1`,
			[]string{"1/0 a:x", "2/0 a:x"}},
		"branch": {`if (args.go) { await mcp.a.x({}) } await mcp.b.y({}); return 1`,
			[]string{"1/0 b:y"}},
		"helper called twice": {`async function f() { return mcp.a.x({}) } await f(); await f(); await mcp.b.y({}); return 1`,
			[]string{"1/2 a:x", "2/2 a:x", "3/0 b:y"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var rep reports
			k := &traces{}
			j := job(t, c.code, k)
			j.Call = func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
				if tool == "b:fail" {
					return nil, errors.New("boom")
				}
				return args, nil
			}
			out := newRunner(sandbox.Limits{}).Run(wire.WithProgress(context.Background(), rep.progress), j)
			if out.Answer.Status != wire.StatusSuccess {
				t.Fatalf("answer %+v", out.Answer)
			}
			if !reflect.DeepEqual(rep.got, c.want) {
				t.Fatalf("progress %q, want %q", rep.got, c.want)
			}
		})
	}
}

// A call that halts the run for an approval did not run: it is not
// reported; without a reporter nothing is.
func TestRunProgressSkipsHaltsAndNeedsAReporter(t *testing.T) {
	var rep reports
	k := &traces{}
	j := job(t, `await mcp.a.x({}); await mcp.b.ask({}); return 1`, k)
	j.Call = func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if tool == "b:ask" {
			return nil, &sandbox.HaltError{Err: errors.New("approve")}
		}
		return args, nil
	}
	j.Halt = func(err error) (wire.Answer, bool) {
		return wire.Answer{Status: wire.StatusApprovalRequired}, err != nil
	}
	newRunner(sandbox.Limits{}).Run(wire.WithProgress(context.Background(), rep.progress), j)
	if want := []string{"1/2 a:x"}; !reflect.DeepEqual(rep.got, want) {
		t.Fatalf("progress %q, want %q", rep.got, want)
	}
	if out := newRunner(sandbox.Limits{}).Run(context.Background(), job(t, `return await mcp.a.x({})`, k)); out.Answer.Status != wire.StatusSuccess {
		t.Fatalf("without a reporter: %+v", out.Answer)
	}
}
