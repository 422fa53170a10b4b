package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/tools"
)

// errHalt stands for the pause a permission layer raises for an "ask" tool.
var errHalt = errors.New("approval required")

func isHalt(err error) bool { return errors.Is(err, errHalt) }

// jsRun mimics how the sandbox drives a CallFunc: each mcp.* call is stamped
// with its issue position and runs on its own goroutine; a halt cancels the
// run, as the sandbox stops the code when it must pause.
type jsRun struct {
	ctx    context.Context
	cancel context.CancelFunc
	call   tools.CallFunc
	issued int
}

type outcome struct {
	res json.RawMessage
	err error
}

func newRun(call tools.CallFunc) *jsRun {
	ctx, cancel := context.WithCancel(context.Background())
	return &jsRun{ctx: ctx, cancel: cancel, call: call}
}

// issue starts a call the way `mcp.ns.action(args)` does (without awaiting).
func (r *jsRun) issue(tool, args string) <-chan outcome {
	ctx := tools.WithCallSeq(r.ctx, r.issued)
	r.issued++
	ch := make(chan outcome, 1)
	go func() {
		res, err := r.call(ctx, tool, json.RawMessage(args))
		if isHalt(err) {
			r.cancel()
		}
		ch <- outcome{res, err}
	}()
	return ch
}

func (r *jsRun) await(ch <-chan outcome) (string, error) {
	o := <-ch
	return string(o.res), o.err
}

// sideEffects is the machine the tools act on: it counts every real execution
// of each logical call (tool + args).
type sideEffects struct {
	mu    sync.Mutex
	count map[string]int
}

func (s *sideEffects) next(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := tool + string(args)
	s.count[key]++
	return json.Marshal(fmt.Sprintf("%s#%d", tool, len(s.count)))
}

// gate halts "shell" calls whose args were not approved yet, like ask permissions.
func gate(approved map[string]bool, next tools.CallFunc) tools.CallFunc {
	return func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if strings.HasPrefix(tool, "shell:") && !approved[string(args)] {
			return nil, fmt.Errorf("%s %s: %w", tool, args, errHalt)
		}
		return next(ctx, tool, args)
	}
}

// program is the code being paused and resumed; its calls depend on earlier
// results, and two of them run under Promise.all.
func program(r *jsRun) (string, error) {
	a, err := r.await(r.issue("filesystem:write_file", `{"path":"a"}`))
	if err != nil {
		return "", err
	}
	p1 := r.issue("shell:exec", `{"cmd":"one"}`)
	p2 := r.issue("filesystem:write_file", `{"path":"b"}`)
	b, err1 := r.await(p1)
	c, err2 := r.await(p2)
	if err := errors.Join(err1, err2); err != nil {
		return "", err
	}
	d, err := r.await(r.issue("shell:exec", `{"cmd":`+a+`}`))
	if err != nil {
		return "", err
	}
	e, err := r.await(r.issue("shell:exec", `{"cmd":"last"}`))
	if err != nil {
		return "", err
	}
	return strings.Join([]string{a, b, c, d, e}, " "), nil
}

func TestJournalThreePausesExecuteEachCallOnce(t *testing.T) {
	fx := &sideEffects{count: map[string]int{}}
	j := NewJournal()
	approved := map[string]bool{}
	approvals := []string{`{"cmd":"one"}`, `{"cmd":"filesystem:write_file#1"}`, `{"cmd":"last"}`}
	var result string
	for runNo := 0; ; runNo++ {
		r := newRun(j.Wrap(gate(approved, fx.next), isHalt))
		res, err := program(r)
		r.cancel()
		if err == nil {
			result = res
			if runNo != len(approvals) {
				t.Fatalf("finished after %d pauses, want %d", runNo, len(approvals))
			}
			break
		}
		if !isHalt(err) || runNo >= len(approvals) {
			t.Fatalf("run %d: %v", runNo, err)
		}
		approved[approvals[runNo]] = true // the person approves; continue_workflow re-runs
	}
	for call, n := range fx.count {
		if n != 1 {
			t.Errorf("%s executed %d times, want once", call, n)
		}
	}
	if len(fx.count) != 5 || j.Len() != 5 {
		t.Errorf("%d logical calls executed, journal has %d; want 5 and 5", len(fx.count), j.Len())
	}
	if !strings.HasPrefix(result, `"filesystem:write_file#1" `) {
		t.Errorf("result = %s", result)
	}
}

func TestJournalReplayDoesNotCallNext(t *testing.T) {
	j := NewJournal()
	var calls atomic.Int32
	next := func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		calls.Add(1)
		return json.RawMessage(`{"n":` + fmt.Sprint(calls.Load()) + `}`), nil
	}
	first := j.Wrap(next, nil)
	for i := range 3 {
		if _, err := first(context.Background(), "math:add", json.RawMessage(fmt.Sprintf(`{"a":%d}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	replay := j.Wrap(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		t.Fatal("next called during replay")
		return nil, nil
	}, nil)
	for i := range 3 {
		// same args, keys in another order and spacing: still the same call
		res, err := replay(context.Background(), "math:add", json.RawMessage(fmt.Sprintf(`{ "a" : %d }`, i)))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`{"n":%d}`, i+1); string(res) != want {
			t.Errorf("replayed call %d = %s, want %s", i, res, want)
		}
	}
	if calls.Load() != 3 {
		t.Errorf("next called %d times, want 3", calls.Load())
	}
}

func TestJournalCallsPastTheJournalAreAppended(t *testing.T) {
	j := NewJournal()
	echo := func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		return args, nil
	}
	call := j.Wrap(echo, nil)
	call(context.Background(), "a:x", json.RawMessage(`1`))
	call = j.Wrap(echo, nil)
	call(context.Background(), "a:x", json.RawMessage(`1`))
	res, err := call(context.Background(), "a:y", json.RawMessage(`2`))
	if err != nil || string(res) != "2" {
		t.Fatalf("new call = %s, %v", res, err)
	}
	entries := j.Entries()
	if len(entries) != 2 || entries[0].Tool != "a:x" || entries[1].Tool != "a:y" || entries[1].Seq != 1 {
		t.Errorf("entries = %+v", entries)
	}
}

// A call's ArgsHash is taken when the journal is read, from the arguments
// as they were at the call: a caller reusing their buffer changes nothing.
func TestJournalHashesArgumentsWhenRead(t *testing.T) {
	j := NewJournal()
	call := j.Wrap(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`true`), nil
	}, nil)
	args := []byte(`{"b": 2, "a": 1}`)
	if _, err := call(context.Background(), "a:x", args); err != nil {
		t.Fatal(err)
	}
	copy(args, `{"b": 3, "a": 9}`)
	if e := j.Entries(); len(e) != 1 || e[0].ArgsHash != ArgsHash(json.RawMessage(`{"a":1,"b":2}`)) {
		t.Fatalf("entries = %+v", e)
	}
	// The re-run with the first arguments replays; with others it diverges.
	call = j.Wrap(nil, nil)
	if res, err := call(context.Background(), "a:x", json.RawMessage(`{"a":1,"b":2}`)); err != nil || string(res) != "true" {
		t.Fatalf("replay = %s, %v", res, err)
	}
	call = j.Wrap(nil, nil)
	if _, err := call(context.Background(), "a:x", json.RawMessage(`{"a":9,"b":3}`)); pmlerr.CodeOf(err, "") != JournalDiverged {
		t.Fatalf("other arguments: %v", err)
	}
}

func TestJournalDivergence(t *testing.T) {
	tests := []struct {
		name, tool, args string
		wantMsg          string
	}{
		{"other tool", "shell:exec", `{"path":"a"}`, "shell:exec instead of filesystem:write_file"},
		{"other args", "filesystem:write_file", `{"path":"b"}`, "different arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := NewJournal()
			var calls atomic.Int32
			next := func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
				calls.Add(1)
				return json.RawMessage(`true`), nil
			}
			j.Wrap(next, nil)(context.Background(), "filesystem:write_file", json.RawMessage(`{"path":"a"}`))
			_, err := j.Wrap(next, nil)(context.Background(), tt.tool, json.RawMessage(tt.args))
			pe, ok := pmlerr.As(err)
			if !ok || pe.Code != JournalDiverged {
				t.Fatalf("err = %v, want %s", err, JournalDiverged)
			}
			if !strings.Contains(pe.Message, tt.wantMsg) || pe.Details["expected_tool"] != "filesystem:write_file" || pe.Details["got_tool"] != tt.tool || pe.Details["seq"] != 0 {
				t.Errorf("error = %q details %v", pe.Message, pe.Details)
			}
			if calls.Load() != 1 {
				t.Errorf("next called %d times, want 1 (a diverged call must not run)", calls.Load())
			}
		})
	}
}

func TestJournalIssueOrderNotCompletionOrder(t *testing.T) {
	const n = 8
	j := NewJournal()
	// run 1: call i completes after call i+1 (reverse completion order)
	var gates [n + 1]chan struct{}
	for i := range gates {
		gates[i] = make(chan struct{})
	}
	close(gates[n])
	slow := func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		seq, _ := tools.CallSeq(ctx)
		<-gates[seq+1]
		defer close(gates[seq])
		return json.RawMessage(fmt.Sprintf(`"result of %s"`, args)), nil
	}
	r := newRun(j.Wrap(slow, nil))
	var pending []<-chan outcome
	for i := range n {
		pending = append(pending, r.issue("math:id", fmt.Sprint(i)))
	}
	for _, p := range pending {
		r.await(p)
	}
	// run 2: same issue order; every call must get its own result, whatever order goroutines run in
	r = newRun(j.Wrap(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("next called during replay")
	}, nil))
	pending = pending[:0]
	for i := range n {
		pending = append(pending, r.issue("math:id", fmt.Sprint(i)))
	}
	for i, p := range pending {
		got, err := r.await(p)
		if want := fmt.Sprintf(`"result of %d"`, i); err != nil || got != want {
			t.Errorf("call %d = %s, %v; want %s", i, got, err, want)
		}
	}
}

func TestJournalFallbackCounter(t *testing.T) {
	j := NewJournal()
	echo := func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		return args, nil
	}
	for range 2 { // the counter restarts at 0 for each Wrap, so run 2 replays
		call := j.Wrap(echo, nil)
		for i := range 3 {
			if _, err := call(context.Background(), "t:t", json.RawMessage(fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if j.Len() != 3 {
		t.Errorf("Len = %d, want 3", j.Len())
	}
	_, err := j.Wrap(echo, nil)(context.Background(), "t:t", json.RawMessage(`7`))
	if pmlerr.CodeOf(err, "") != JournalDiverged {
		t.Errorf("err = %v, want divergence at position 0", err)
	}
}

func TestJournalReplaysToolErrors(t *testing.T) {
	j := NewJournal()
	toolErr := pmlerr.New(pmlerr.ToolError, "no such file: a.txt").With("tool", "filesystem:read_file")
	fail := func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if tool == "filesystem:read_file" {
			return nil, toolErr
		}
		return nil, errors.New("connection reset")
	}
	call := j.Wrap(fail, isHalt)
	_, err1 := call(context.Background(), "filesystem:read_file", nil)
	_, err2 := call(context.Background(), "other:thing", nil)
	replay := j.Wrap(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`"must not run"`), nil
	}, isHalt)
	_, got1 := replay(context.Background(), "filesystem:read_file", nil)
	_, got2 := replay(context.Background(), "other:thing", nil)
	pe, ok := pmlerr.As(got1)
	if !ok || pe.Code != pmlerr.ToolError || pe.Message != toolErr.Message || pe.Details["tool"] != "filesystem:read_file" {
		t.Errorf("replayed tool error = %#v, want %#v", got1, err1)
	}
	if got2 == nil || got2.Error() != err2.Error() {
		t.Errorf("replayed plain error = %v, want %v", got2, err2)
	}
	if _, ok := pmlerr.As(got2); ok {
		t.Errorf("plain error replayed with a wire code: %v", got2)
	}
}

func TestJournalSkipsHaltsAndCancelledCalls(t *testing.T) {
	j := NewJournal()
	started := make(chan struct{})
	var runs atomic.Int32
	next := func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		runs.Add(1)
		switch tool {
		case "shell:exec":
			<-started // halt only once the slow call is in flight
			return nil, errHalt
		case "http:slow":
			close(started)
			<-ctx.Done() // interrupted when the run is stopped by the halt
			return nil, pmlerr.Wrap(pmlerr.RPCTimeout, ctx.Err())
		}
		return json.RawMessage(`1`), nil
	}
	r := newRun(j.Wrap(next, isHalt))
	slow := r.issue("http:slow", `{}`)
	halted := r.issue("shell:exec", `{}`)
	if _, err := r.await(halted); !isHalt(err) {
		t.Fatalf("halt = %v", err)
	}
	if _, err := r.await(slow); err == nil {
		t.Fatal("slow call not cancelled")
	}
	if j.Len() != 0 {
		t.Fatalf("journal recorded %+v; halts and calls cut short by the stop must run again", j.Entries())
	}
	// the resumed run executes both for real
	r = newRun(j.Wrap(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		runs.Add(1)
		return json.RawMessage(`"done"`), nil
	}, isHalt))
	for _, p := range []<-chan outcome{r.issue("http:slow", `{}`), r.issue("shell:exec", `{}`)} {
		if got, err := r.await(p); err != nil || got != `"done"` {
			t.Errorf("resumed call = %s, %v", got, err)
		}
	}
	if runs.Load() != 4 || j.Len() != 2 {
		t.Errorf("next ran %d times (want 4), journal %d (want 2)", runs.Load(), j.Len())
	}
}

func TestJournalConcurrentCalls(t *testing.T) {
	j := NewJournal()
	next := func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		time.Sleep(time.Millisecond)
		return args, nil
	}
	r := newRun(j.Wrap(next, nil))
	var chans []<-chan outcome
	for i := range 50 {
		chans = append(chans, r.issue("x:y", fmt.Sprint(i)))
	}
	for i, c := range chans {
		if s, err := r.await(c); err != nil || s != fmt.Sprint(i) {
			t.Errorf("call %d = %s, %v", i, s, err)
		}
		_ = j.Len() // readers race with writers under -race
		_ = j.Entries()
	}
	if !slices.IsSortedFunc(j.Entries(), func(a, b JournalEntry) int { return a.Seq - b.Seq }) || j.Len() != 50 {
		t.Errorf("entries not complete and ordered")
	}
}

func TestArgsHash(t *testing.T) {
	same := [][]string{
		{`{"a":1,"b":[1,2,{"y":true,"x":null}]}`, `{ "b" : [1,2,{"x":null,"y":true}], "a":1 }`},
		{``, `null`},
		{`"<&>"`, `"\u003c\u0026\u003e"`},
	}
	for _, pair := range same {
		if ArgsHash(json.RawMessage(pair[0])) != ArgsHash(json.RawMessage(pair[1])) {
			t.Errorf("ArgsHash(%s) != ArgsHash(%s)", pair[0], pair[1])
		}
	}
	different := [][]string{
		{`{"a":1}`, `{"a":2}`},
		{`{"a":1}`, `{"a":"1"}`},
		{`9007199254740993`, `9007199254740992`}, // no float rounding
		{`{}`, `null`},
		{`[1,2]`, `[2,1]`},
	}
	for _, pair := range different {
		if ArgsHash(json.RawMessage(pair[0])) == ArgsHash(json.RawMessage(pair[1])) {
			t.Errorf("ArgsHash(%s) == ArgsHash(%s)", pair[0], pair[1])
		}
	}
	if h := ArgsHash(json.RawMessage(`{"a":1}`)); len(h) != 64 {
		t.Errorf("hash %q is not SHA-256 hex", h)
	}
}

// The journal keeps the last tape a paused run recorded, as a copy that
// neither the recorder nor a reader can change afterwards.
func TestJournalKeepsTheTape(t *testing.T) {
	j := NewJournal()
	if j.Values() != nil {
		t.Fatalf("new journal has a tape: %s", j.Values())
	}
	rec := json.RawMessage(`{"now":[1],"random":[0.5]}`)
	j.Record(rec)
	rec[2] = 'X'
	got := j.Values()
	got[3] = 'Y'
	j.Record(json.RawMessage(`{"now":[1,2],"random":[0.5]}`))
	if string(j.Values()) != `{"now":[1,2],"random":[0.5]}` {
		t.Fatalf("tape %s", j.Values())
	}
	j2 := NewJournal()
	j2.Record(json.RawMessage(`{"now":[3],"random":[]}`))
	if string(j2.Values()) != `{"now":[3],"random":[]}` || got[2] != 'n' {
		t.Fatalf("tape %s, copy %s", j2.Values(), got)
	}
}
