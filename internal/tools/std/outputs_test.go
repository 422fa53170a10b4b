package std

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/pml-go/pml/internal/tools"
)

// arbitraryOutput lists the built-ins that declare no output schema, and
// why: their result is any JSON value, which no schema narrows.
var arbitraryOutput = map[string]string{
	"json:parse": "the value the JSON text holds",
	"json:query": "the value at the path, or the caller's default",
}

// TestEveryToolDeclaresItsOutput holds every built-in to an output schema
// (docs/how-it-works.md "Typed answers") and every happy-path result, a real
// call's, to the schema its tool declares.
func TestEveryToolDeclaresItsOutput(t *testing.T) {
	infos, err := New().Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	resolved := map[string]*jsonschema.Resolved{}
	declared := map[string]json.RawMessage{}
	for _, info := range infos {
		_, arbitrary := arbitraryOutput[info.ID]
		switch {
		case len(info.OutputSchema) == 0 && !arbitrary:
			t.Errorf("%s declares no output schema", info.ID)
			continue
		case len(info.OutputSchema) > 0 && arbitrary:
			t.Errorf("%s declares an output schema but is listed as arbitrary JSON", info.ID)
			continue
		case arbitrary:
			continue
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(info.OutputSchema, &s); err != nil {
			t.Errorf("%s: output schema: %v", info.ID, err)
			continue
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Errorf("%s: output schema does not compile: %v", info.ID, err)
			continue
		}
		resolved[info.ID], declared[info.ID] = rs, info.OutputSchema
		if d := tools.CompactDeclaration(info); strings.HasSuffix(d, "Promise<unknown>") {
			t.Errorf("%s: declaration still promises unknown: %s", info.ID, d)
		}
	}
	checked := map[string]int{}
	for _, c := range happy {
		rs, ok := resolved[c.tool]
		if !ok {
			continue
		}
		out, err := call(t, c.tool, c.args)
		if err != nil {
			t.Errorf("%s(%s): %v", c.tool, c.args, err)
			continue
		}
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Errorf("%s(%s) = %s: not JSON: %v", c.tool, c.args, out, err)
			continue
		}
		if err := rs.Validate(v); err != nil {
			t.Errorf("%s(%s) = %s, outside its output schema %s: %v", c.tool, c.args, out, declared[c.tool], err)
		}
		checked[c.tool]++
	}
	for id := range resolved {
		if checked[id] == 0 {
			t.Errorf("%s: no happy-path call checks its result against its output schema", id)
		}
	}
}
