package gateway

import (
	"bytes"
	"testing"

	"github.com/pml-go/pml/internal/wire"
)

// The plain endpoint's execute_locally answer is, byte for byte, the JSON
// of a wire.Answer holding only its three fields (docs/protocol.md "Plain
// execute"), whatever the strings hold.
func TestLocalAnswerIsTheAnswersJSON(t *testing.T) {
	for _, c := range []struct{ workflow, hash string }{
		{"wf-0123456789abcdef", wire.CodeHash("return 1")},
		{"", wire.CodeHash("")},
		{"", ""},
		{`<b>&"q"\` + "\u2028\x01é", "🙂"},
	} {
		want, err := wire.Marshal(wire.Answer{Status: wire.StatusExecuteLocally, WorkflowID: c.workflow, CodeHash: c.hash})
		if err != nil {
			t.Fatal(err)
		}
		got, err := wire.Marshal(localAnswer{Status: wire.StatusExecuteLocally, WorkflowID: c.workflow, CodeHash: c.hash})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%q %q: %s, want %s", c.workflow, c.hash, got, want)
		}
	}
}
