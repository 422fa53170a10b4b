package runner

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/admission"
	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tracing"
)

// capBridge serves one tool ("math:add") and capabilities from code, each
// run nested through the same bridge.
func capBridge(t *testing.T, r *Runner, caps map[string]string) tools.CallFunc {
	var call tools.CallFunc
	call = func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if tool == "math:add" {
			var a struct{ A, B float64 }
			_ = json.Unmarshal(args, &a)
			return json.Marshal(a.A + a.B)
		}
		code, ok := caps[tool]
		if !ok {
			return nil, pmlerr.New(pmlerr.UnknownTool, "unknown %s", tool)
		}
		an, err := analysis.Analyze(code)
		if err != nil {
			t.Fatal(err)
		}
		return r.RunNested(ctx, Nested{Tool: tool, Analysis: an, Args: args, Call: call, Trace: discard})
	}
	return call
}

// newRunner runs with lim under a real admission controller.
func newRunner(lim sandbox.Limits) *Runner {
	return &Runner{Admission: admission.New(admission.Limits{}, lim), Limits: lim}
}

// run runs code as an admitted execution, as the callers of RunNested do,
// so that nested VMs join it.
func run(t *testing.T, r *Runner, call tools.CallFunc, code string) (json.RawMessage, error) {
	t.Helper()
	an, err := analysis.Analyze(code)
	if err != nil {
		t.Fatal(err)
	}
	ctx, vm, err := r.Admission.Enter(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer vm.Exit()
	res, err := sandbox.Run(ctx, an.JS, nil, vm.Wrap(call), sandbox.Limits{})
	return res.Value, err
}

func TestRunNestedBindsArgs(t *testing.T) {
	r := newRunner(sandbox.Limits{})
	call := capBridge(t, r, map[string]string{
		"cap:add3":  "return await mcp.math.add({a: args.x, b: 3})",
		"cap:twice": "const once = await mcp.cap.add3({x: args.x}); return await mcp.cap.add3({x: once})",
	})
	out, err := run(t, r, call, "return await mcp.cap.twice({x: 1})")
	if err != nil || string(out) != "7" {
		t.Fatalf("got %s, %v", out, err)
	}
}

func TestRunNestedFailureIsCatchableToolError(t *testing.T) {
	r := newRunner(sandbox.Limits{})
	call := capBridge(t, r, map[string]string{"cap:boom": "throw new Error('kaput ' + args.n)"})
	out, err := run(t, r, call, "try { await mcp.cap.boom({n: 1}) } catch (e) { return e.code + ': ' + e.message }")
	if err != nil || !strings.Contains(string(out), "TOOL_ERROR: capability cap:boom failed: kaput 1") {
		t.Fatalf("got %s, %v", out, err)
	}
	_, err = run(t, r, call, "return await mcp.cap.boom({n: 2})")
	pe, ok := pmlerr.As(err)
	if !ok || pe.Code != pmlerr.ToolError || !strings.Contains(pe.Message, "kaput 2") {
		t.Fatalf("uncaught: %v", err)
	}
	// The capability's own code survives in the detail of the nested error.
	var inner *pmlerr.Error
	if !errors.As(pe.Err, &inner) || inner.Details["capability_error_code"] != "CODE_ERROR" {
		t.Errorf("inner %+v", inner)
	}
}

func TestRunNestedRecursionIsBounded(t *testing.T) {
	r := newRunner(sandbox.Limits{})
	call := capBridge(t, r, map[string]string{"cap:loop": "return await mcp.cap.loop(args)"})
	_, err := run(t, r, call, "return await mcp.cap.loop({})")
	pe, ok := pmlerr.As(err)
	if !ok || pe.Code != pmlerr.ToolError || !strings.Contains(pe.Message, "more than 8 capabilities nested") {
		t.Fatalf("recursion: %v", err)
	}
	// The next run works.
	if out, err := run(t, r, capBridge(t, r, nil), "return await mcp.math.add({a: 1, b: 1})"); err != nil || string(out) != "2" {
		t.Fatalf("next run: %s %v", out, err)
	}
}

func TestRunNestedPassesHalts(t *testing.T) {
	r := newRunner(sandbox.Limits{})
	halt := &sandbox.HaltError{Err: errors.New("ask first")}
	var bridge tools.CallFunc
	bridge = func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if tool == "shell:exec" {
			return nil, halt
		}
		an, _ := analysis.Analyze("return await mcp.shell.exec({})")
		return r.RunNested(ctx, Nested{Tool: tool, Analysis: an, Args: args, Call: bridge, Trace: discard})
	}
	_, err := run(t, r, bridge, "try { return await mcp.cap.sh({}) } catch (e) { return 'caught' }")
	if !errors.Is(err, halt) {
		t.Fatalf("want the halt, uncaught, got %v", err)
	}
}

func TestRunNestedOwnLimits(t *testing.T) {
	an, err := analysis.Analyze("return new ArrayBuffer(1 << 30).byteLength")
	if err != nil {
		t.Fatal(err)
	}
	_, err = newRunner(sandbox.Limits{MemoryBytes: 4 << 20}).RunNested(context.Background(), Nested{Tool: "cap:hog", Analysis: an, Trace: discard})
	var inner *pmlerr.Error
	if !errors.As(err, &inner) || inner.Details["capability_error_code"] != string(pmlerr.MemoryLimit) {
		t.Fatalf("memory hog: %v", err)
	}
	if _, err := newRunner(sandbox.Limits{}).RunNested(context.Background(), Nested{Tool: "cap:x", Analysis: an, Args: json.RawMessage(`[1]`), Trace: discard}); err == nil {
		t.Fatal("array args: want error")
	}
}

var discard = Sink{Keep: func(tracing.Trace) {}}

// A nested capability run gets a child trace linked to its caller's trace and task.
func TestRunNestedRecordsAChildTrace(t *testing.T) {
	an, err := analysis.Analyze(`return await mcp.math.add({a: args.n, b: 1})`)
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(sandbox.Limits{})
	var children []tracing.Trace
	var bridge tools.CallFunc
	bridge = func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if tool == "math:add" {
			return json.RawMessage("3"), nil
		}
		return r.RunNested(ctx, Nested{Tool: tool, FQDN: "acme.web.cap.inc.abcd", Analysis: an, Args: args, Call: bridge,
			Trace: Sink{Keep: func(tr tracing.Trace) { children = append(children, tr) }}})
	}
	parent := tracing.NewRecorder(tracing.NewTraceID(), tracing.RecorderOptions{})
	out, err := run(t, r, parent.Wrap(bridge), `return await mcp.cap.inc({n: 2})`)
	if err != nil || string(out) != "3" {
		t.Fatalf("%s %v", out, err)
	}
	top := parent.Finish(tracing.Trace{}, nil)
	if len(children) != 1 {
		t.Fatalf("%d child traces", len(children))
	}
	child := children[0]
	if child.ParentTraceID != parent.TraceID() || child.CapabilityFQDN != "acme.web.cap.inc.abcd" || len(child.Tasks) != 1 || !child.Success {
		t.Fatalf("child %+v", child)
	}
	if len(top.Tasks) != 1 || top.Tasks[0].ChildTraceID != child.TraceID {
		t.Fatalf("parent task not linked: %+v", top.Tasks)
	}
}
