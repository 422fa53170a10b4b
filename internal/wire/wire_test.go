package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
)

func TestDecodeExecuteRejectsGarbledRequests(t *testing.T) {
	cases := map[string]string{
		"code not a string":           `{"code": 42}`,
		"continue without id":         `{"continue_workflow": {"approved": true}}`,
		"continue without approved":   `{"continue_workflow": {"workflow_id": "w"}}`,
		"approved not a bool":         `{"continue_workflow": {"workflow_id": "w", "approved": "yes"}}`,
		"continue_workflow not a map": `{"continue_workflow": "w"}`,
		"negative timeout":            `{"code": "return 1", "options": {"timeout_ms": -5}}`,
		"not an object":               `[1, 2]`,
		"always without approval":     `{"continue_workflow": {"workflow_id": "w", "approved": false, "always": true}}`,
		"always not a bool":           `{"continue_workflow": {"workflow_id": "w", "approved": true, "always": "yes"}}`,
		"args an array":               `{"code": "return 1", "args": [1]}`,
		"args a string":               `{"code": "return 1", "args": "{}"}`,
		"args a number":               `{"code": "return 1", "args": 3}`,
		"args not JSON":               `{"code": "return 1", "args": {]}`,
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeExecute(json.RawMessage(raw))
			if pmlerr.CodeOf(err, "") != pmlerr.InvalidRequest {
				t.Fatalf("want INVALID_REQUEST, got %v", err)
			}
		})
	}
	req, err := DecodeExecute(json.RawMessage(`{"code":"return 1","continue_workflow":{"workflow_id":"w","approved":false}}`))
	if err != nil || *req.ContinueWorkflow.Approved {
		t.Fatalf("valid request: %v", err)
	}
	req, err = DecodeExecute(json.RawMessage(`{"continue_workflow":{"workflow_id":"w","approved":true,"always":true}}`))
	if err != nil || !req.ContinueWorkflow.Always {
		t.Fatalf("always: %+v %v", req.ContinueWorkflow, err)
	}
}

// args is a JSON object or nothing; the refusal says so.
func TestDecodeExecuteArgs(t *testing.T) {
	_, err := DecodeExecute(json.RawMessage(`{"code":"return 1","args":[1]}`))
	if pmlerr.CodeOf(err, "") != pmlerr.InvalidRequest || !strings.Contains(err.Error(), "args must be a JSON object") {
		t.Fatalf("array args: %v", err)
	}
	for _, raw := range []string{`{"code":"return 1","args":{"n":1}}`, `{"code":"return 1","args":null}`, `{"code":"return 1"}`} {
		if _, err := DecodeExecute(json.RawMessage(raw)); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
	}
	req, _ := DecodeExecute(json.RawMessage(`{"code":"return 1","args": {"n": 1}}`))
	if string(req.Args) != `{"n": 1}` {
		t.Fatalf("args kept as %s", req.Args)
	}
}

func TestAnswerDetailsRoundTrip(t *testing.T) {
	a := ErrorAnswer(pmlerr.New(pmlerr.SyntaxError, "bad").With("line", 3).With("column", 7), "wf")
	body, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"line":3`) || !strings.Contains(string(body), `"error_code":"SYNTAX_ERROR"`) {
		t.Fatalf("details not at top level: %s", body)
	}
	var back Answer
	if err := json.Unmarshal(body, &back); err != nil {
		t.Fatal(err)
	}
	if back.Details["line"] != float64(3) || back.WorkflowID != "wf" {
		t.Fatalf("round trip: %+v", back)
	}
	if pe, ok := pmlerr.As(back.Err()); !ok || pe.Code != pmlerr.SyntaxError {
		t.Fatalf("Err(): %v", back.Err())
	}
	// A detail never overwrites a field.
	a = ErrorAnswer(pmlerr.New(pmlerr.ToolError, "x").With("status", "success"), "")
	body, _ = json.Marshal(a)
	if !strings.Contains(string(body), `"status":"error"`) {
		t.Fatalf("detail overwrote status: %s", body)
	}
}

// A value of the wrong type is refused in the tool's terms: the argument
// and the JSON type its schema asks for, not Go's struct field and type
// (issue 41, item 7).
func TestDecodeExecuteSpeaksTheToolsLanguage(t *testing.T) {
	for raw, want := range map[string]string{
		`{"code": 42}`: "code must be a string, not a number",
		`{"code": "return 1", "options": {"timeout_ms": "5s"}}`:          "options.timeout_ms must be an integer, not a string",
		`{"code": "return 1", "options": {"timeout_ms": 1.5}}`:           "options.timeout_ms must be an integer, not a number 1.5",
		`{"continue_workflow": {"workflow_id": "w", "approved": "yes"}}`: "continue_workflow.approved must be true or false, not a string",
		`{"continue_workflow": "w"}`:                                     "continue_workflow must be an object, not a string",
	} {
		_, err := DecodeExecute(json.RawMessage(raw))
		if pmlerr.CodeOf(err, "") != pmlerr.InvalidRequest || err.Error() != want && !strings.HasSuffix(err.Error(), ": "+want) {
			t.Errorf("%s: got %v, want %q", raw, err, want)
		}
		if err != nil && (strings.Contains(err.Error(), "Go struct") || strings.Contains(err.Error(), "ExecuteRequest")) {
			t.Errorf("%s: the message names Go's types: %v", raw, err)
		}
	}
	var dr DiscoverRequest
	if err := DecodeArgs(json.RawMessage(`{"query": 3}`), &dr); err == nil || !strings.Contains(err.Error(), "query must be a string") {
		t.Errorf("discover {query: 3}: %v", err)
	}
}

// A LocalAnswer's JSON is, byte for byte, that of the Answer holding only
// its fields (docs/protocol.md "Plain execute"), whatever the strings hold.
func TestLocalAnswerIsTheAnswersJSON(t *testing.T) {
	for _, l := range []LocalAnswer{
		{Status: StatusExecuteLocally, WorkflowID: "wf-0123456789abcdef", CodeHash: CodeHash("return 1")},
		{Status: StatusExecuteLocally, CodeHash: CodeHash("")},
		{Status: StatusExecuteLocally},
		{Status: StatusExecuteLocally, WorkflowID: `<b>&"q"\` + "\u2028\x01é", CodeHash: "🙂"},
	} {
		want, err := Marshal(l.Answer())
		if err != nil {
			t.Fatal(err)
		}
		got, err := Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%+v: %s, want %s", l, got, want)
		}
	}
}
