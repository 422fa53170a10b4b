package tools

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
)

const testSchema = `{
	"type": "object",
	"properties": {
		"path": {"type": "string"},
		"limit": {"type": "integer", "minimum": 1},
		"mode": {"enum": ["fast", "slow"]},
		"opts": {"type": "object", "properties": {"depth": {"type": "number"}}, "required": ["depth"]},
		"tags": {"type": "array", "items": {"type": "string"}},
		"rows": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}}}}
	},
	"required": ["path"],
	"additionalProperties": false
}`

func TestValidatorMessagesNameTheField(t *testing.T) {
	v := NewValidator()
	cases := []struct {
		args string
		want []string // substrings of the message
	}{
		{`{}`, []string{`missing required field "path"`}},
		{`{"path": 3}`, []string{`field "path"`, `want "string"`}},
		{`{"path": "a", "limit": 0}`, []string{`field "limit"`, "less than"}},
		{`{"path": "a", "limit": 1.5}`, []string{`field "limit"`, `want "integer"`}},
		{`{"path": "a", "mode": "medium"}`, []string{`field "mode"`, "medium"}},
		{`{"path": "a", "opts": {}}`, []string{`missing required field "opts.depth"`}},
		{`{"path": "a", "opts": {"depth": "x"}}`, []string{`field "opts.depth"`}},
		{`{"path": "a", "tags": ["x", 2]}`, []string{`field "tags[]"`, `want "string"`}},
		{`{"path": "a", "rows": [{"id": "z"}]}`, []string{`field "rows[].id"`}},
		{`{"path": "a", "extra": 1}`, []string{`unknown field(s) "extra"`}},
		{`[1, 2]`, []string{"expected a JSON object"}},
	}
	for _, c := range cases {
		err := v.Validate(json.RawMessage(testSchema), json.RawMessage(c.args))
		pe, ok := pmlerr.As(err)
		if !ok || pe.Code != pmlerr.ToolError {
			t.Errorf("Validate(%s) = %v, want TOOL_ERROR", c.args, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(pe.Message, w) {
				t.Errorf("Validate(%s) message %q does not contain %q", c.args, pe.Message, w)
			}
		}
	}
}

func TestValidatorAccepts(t *testing.T) {
	v := NewValidator()
	for _, args := range []string{
		`{"path": "a"}`,
		`{"path": "a", "limit": 2, "mode": "fast", "opts": {"depth": 1.5}, "tags": [], "rows": [{"id": 1}]}`,
	} {
		if err := v.Validate(json.RawMessage(testSchema), json.RawMessage(args)); err != nil {
			t.Errorf("Validate(%s) = %v, want nil", args, err)
		}
	}
	// No schema: any object, and empty or null args, are accepted.
	for _, args := range []string{``, `null`, `{"x": 1}`} {
		if err := v.Validate(nil, json.RawMessage(args)); err != nil {
			t.Errorf("Validate(no schema, %q) = %v", args, err)
		}
	}
	// Empty args count as {} against a schema too.
	if err := v.Validate(json.RawMessage(`{"type":"object"}`), nil); err != nil {
		t.Errorf("Validate(object schema, nil) = %v", err)
	}
}

func TestValidatorInvalidSchema(t *testing.T) {
	v := NewValidator()
	for _, schema := range []string{`{"type": 12}`, `{"$ref": "#/$defs/missing"}`, `not json`} {
		err := v.Validate(json.RawMessage(schema), json.RawMessage(`{}`))
		if !errors.Is(err, ErrInvalidSchema) {
			t.Errorf("Validate(schema %s) = %v, want ErrInvalidSchema", schema, err)
		}
	}
}

func TestValidatorCachesCompiledSchemas(t *testing.T) {
	v := NewValidator()
	for range 3 {
		if err := v.Validate(json.RawMessage(testSchema), json.RawMessage(`{"path":"a"}`)); err != nil {
			t.Fatal(err)
		}
	}
	if len(v.cache) != 1 {
		t.Fatalf("cache holds %d schemas, want 1", len(v.cache))
	}
}
