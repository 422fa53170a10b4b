package gatewayclient

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/pml-go/pml/internal/wire"
)

// decodeAnswer gives what json.Unmarshal into a wire.Answer gives, for the
// plain endpoint's execute_locally answers (its shortcut) and for every
// other shape, details included.
func TestDecodeAnswerIsUnmarshal(t *testing.T) {
	hash := wire.CodeHash("return 1")
	var answers []string
	for _, l := range []wire.LocalAnswer{
		{Status: wire.StatusExecuteLocally, WorkflowID: "wf-1", CodeHash: hash},
		{Status: wire.StatusExecuteLocally, CodeHash: hash},
		{Status: wire.StatusExecuteLocally},
		{Status: wire.StatusExecuteLocally, WorkflowID: `<b>&"q"\` + "\u2028\x01é🙂", CodeHash: hash},
	} {
		b, err := wire.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		answers = append(answers, string(b))
		if _, ok := plainLocalAnswer(b); ok != (l.WorkflowID == "" || l.WorkflowID == "wf-1") {
			t.Errorf("%s: read without encoding/json %v", b, ok)
		}
	}
	answers = append(answers,
		`{"status":"execute_locally","workflow_id":"wf-1","code_hash":"`+hash+`","extra":{"a":[1,2]}}`,
		`{"status":"execute_locally","code_hash":"`+hash+`","workflow_id":"wf-1"}`,
		`{"status":"execute_locally","Workflow_ID":"wf-1","code_hash":"`+hash+`"}`,
		`{"status":"execute_locally","workflow_id":"wf-1","code_hash":"`+hash+`","code":"return 1","dag":{}}`,
		`{"status":"execute_locally", "workflow_id":"wf-1"}`,
		`{"status":"execute_locally","workflow_id":"\u0077f"}`,
		`{"status":"execute_locally","workflow_id":""}`,
		`{"status":"execute_locally","code_hash":"ab","workflow_id":"wf-1"}`,
		`{"status":"execute_locally","workflow_id":"wf-1","code_hash":"ab"} `,
		`{"status":"execute_locally","workflow_id":"wf-1","code_hash":"ab"}}`,
		`{"status":"execute_locally","workflow_id":"wf 1"}`,
		`{"status":"execute_locally","workflow_id":"wf-1`,
		`{"status":"execute_locally"}`,
		`{"status":"execute_locally","code_hash":"a.b_c-D9"}`,
		`{"status":"execute_locally","workflow_id":"wf-1","workflow_id":"wf-2"}`,
		`{"status":"execute_locally","workflow_id":7}`,
		`{"status":"execute_locally"`,
		`{"status":"success","result":{"x":1},"trace_id":"t"}`,
		`{"status":"error","error_code":"UNAUTHORIZED","error":"no","retry_after_ms":5}`,
		`null`,
	)
	for _, raw := range answers {
		var want wire.Answer
		wantErr := json.Unmarshal([]byte(raw), &want)
		got, err := decodeAnswer([]byte(raw))
		if (err != nil) != (wantErr != nil) || !reflect.DeepEqual(got, want) && wantErr == nil {
			t.Errorf("%s: decodeAnswer %+v, %v; json.Unmarshal %+v, %v", raw, got, err, want, wantErr)
		}
	}
}
