package wire

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/pmlerr"
)

// Tool results carry JSON as written: no \u003c for "<", even inside the
// details an Answer merges into its top level.
func TestResultsDoNotEscapeHTML(t *testing.T) {
	text := func(r *mcp.CallToolResult) string { return r.Content[0].(*mcp.TextContent).Text }
	a := Answer{Status: StatusSuccess, Result: json.RawMessage(`"<b>&"`), Details: map[string]any{"note": "a<b>&c"}}
	if got, want := text(AnswerResult(a)), `{"note":"a<b>&c","result":"<b>&","status":"success"}`; got != want {
		t.Fatalf("AnswerResult: %s, want %s", got, want)
	}
	if got, want := text(AnswerResult(Answer{Status: StatusSuccess, Result: json.RawMessage(`"<b>&"`)})), `{"status":"success","result":"<b>&"}`; got != want {
		t.Fatalf("AnswerResult: %s, want %s", got, want)
	}
	if got, want := text(JSONResult(map[string]string{"ts": "Promise<unknown> & more"})), `{"ts":"Promise<unknown> & more"}`; got != want {
		t.Fatalf("JSONResult: %s, want %s", got, want)
	}
	if got, want := text(ErrorResult(pmlerr.New(pmlerr.InvalidRequest, "bad <x>"))), `{"status":"error","error_code":"INVALID_REQUEST","error":"bad <x>"}`; got != want {
		t.Fatalf("ErrorResult: %s, want %s", got, want)
	}
	got, err := MarshalIndent(map[string]string{"a": "<&>"}, "", "  ")
	if err != nil || string(got) != "{\n  \"a\": \"<&>\"\n}" {
		t.Fatalf("MarshalIndent: %q %v", got, err)
	}
}
