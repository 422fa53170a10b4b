package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// localWorkspace makes the current directory a fresh local-mode workspace
// (in-process gateway, no key) whose .pml.json allows every tool, with a.json
// to read.
func localWorkspace(t *testing.T) string {
	t.Helper()
	ws := testfixture.Workspace(t, nil)
	testfixture.WriteFile(t, ws, "a.json", `{"items": [1, 2, 3]}`)
	t.Setenv("PML_CLOUD_URL", "")
	t.Setenv("PML_WORKSPACE", ws)
	t.Chdir(ws)
	return ws
}

// runPML runs one pml command line in this process, as the binary would.
func runPML(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(strings.NewReader(""))
	err = root.Execute()
	return out.String(), errOut.String(), err
}

// execOK runs `pml exec CODE` and returns its answer, which must succeed.
func execOK(t *testing.T, code string) wire.Answer {
	t.Helper()
	out, stderr, err := runPML(t, "exec", code)
	var a wire.Answer
	if jerr := json.Unmarshal([]byte(out), &a); err != nil || jerr != nil || a.Status != wire.StatusSuccess {
		t.Fatalf("pml exec %q: %v\n%s\n%s", code, err, out, stderr)
	}
	return a
}

// learnAndCallCapability runs code that is learned as cap:read_parse_json,
// then calls that capability; it returns the calling execution's answer.
func learnAndCallCapability(t *testing.T) wire.Answer {
	t.Helper()
	execOK(t, `const t = await mcp.filesystem.read_file({path: "a.json"}); const p = await mcp.json.parse({data: t}); return p.items.length`)
	a := execOK(t, `return await mcp.cap.read_parse_json({path: "a.json"})`)
	if string(a.Result) != "3" {
		t.Fatalf("the capability answered %s", a.Result)
	}
	return a
}

// `pml traces` lists executions: a capability's inner run is nested under
// the execution that called it, not a top-level row of its own, and the
// tree of that execution names the side of the inner run's calls (issue 33,
// section 3, item 1).
func TestTracesNestsCapabilityRuns(t *testing.T) {
	localWorkspace(t)
	a := learnAndCallCapability(t)

	out, stderr, err := runPML(t, "traces")
	if err != nil {
		t.Fatalf("pml traces: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	top := regexp.MustCompile(`^[0-9a-f]{32} `)
	nested := regexp.MustCompile(`^  [0-9a-f]{32} .*local\.default\.cap\.read_parse_json\.[0-9a-f]{4}: filesystem:read_file, json:parse$`)
	var tops, inner int
	for i, l := range lines {
		switch {
		case top.MatchString(l):
			tops++
		case nested.MatchString(l):
			inner++
			if i == 0 || !strings.HasPrefix(lines[i-1], a.TraceID+" ") {
				t.Errorf("the capability run is not under the execution %s that called it:\n%s", a.TraceID, out)
			}
		}
	}
	if tops != 2 || inner != 1 || !strings.Contains(out, "2 of 2 executions") {
		t.Errorf("want 2 executions and 1 nested capability run, got %d and %d:\n%s", tops, inner, out)
	}

	out, stderr, err = runPML(t, "traces", a.TraceID)
	if err != nil {
		t.Fatalf("pml traces %s: %v\n%s", a.TraceID, err, stderr)
	}
	for _, want := range []string{"t1 filesystem:read_file  client  ok", "t2 json:parse  server  ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("the tree lacks %q (the inner calls' side):\n%s", want, out)
		}
	}
}

// `pml traces WORKFLOW_ID` (exec prints workflow_id first, so that is the id
// people paste) shows that workflow's execution and says which trace id it
// is; an id that is neither says so, in local mode without the API key
// wording (issue 33, section 3, item 3).
func TestTracesAcceptsWorkflowID(t *testing.T) {
	localWorkspace(t)
	a := execOK(t, `return await mcp.math.add({a: 1, b: 2})`)
	if a.WorkflowID == "" || a.WorkflowID == a.TraceID {
		t.Fatalf("answer: %+v", a)
	}
	out, stderr, err := runPML(t, "traces", a.WorkflowID)
	if err != nil || !strings.HasPrefix(out, "execution "+a.TraceID+"  success") ||
		!strings.Contains(stderr, a.WorkflowID+" is a workflow id; its execution's trace id is "+a.TraceID) {
		t.Fatalf("pml traces WORKFLOW_ID: %v\n%s\n%s", err, out, stderr)
	}
	out, _, err = runPML(t, "traces", "--json", a.WorkflowID)
	var node struct {
		Trace struct {
			TraceID string `json:"trace_id"`
		} `json:"trace"`
	}
	if err != nil || json.Unmarshal([]byte(out), &node) != nil || node.Trace.TraceID != a.TraceID {
		t.Fatalf("pml traces --json WORKFLOW_ID: %v\n%s", err, out)
	}

	const unknown = "0123456789abcdef0123456789abcdef"
	_, _, err = runPML(t, "traces", unknown)
	if code, _ := exitCode(err); code != exitError || err == nil ||
		err.Error() != `no trace "`+unknown+`" in this workspace, nor an execution's workflow id (HTTP 404)` {
		t.Fatalf("unknown id: exit %d: %v", code, err)
	}
}
