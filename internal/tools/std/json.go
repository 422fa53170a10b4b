package std

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pml-go/pml/internal/tools"
)

func jsonTools() []tools.Func {
	// json:parse and json:query return whatever JSON the caller's text holds
	// or sits at the path (or the caller's default): no schema says more
	// than unknown.
	return []tools.Func{
		tools.Typed(info("json:parse",
			"Parse a JSON text into its value (object, array, string, number, boolean or null), keeping key order and number precision.",
			`{"type":"object","properties":{"data":{"type":"string","description":"The JSON text."}},"required":["data"],"additionalProperties":false}`, arbitraryJSON),
			jsonParse),
		tools.Typed(info("json:stringify",
			"Serialize a value to JSON text, like JSON.stringify(data, null, indent). Key order is kept.",
			`{"type":"object","properties":{
				"data":{"description":"The value to serialize."},
				"indent":{"type":["integer","string"],"minimum":0,"maximum":10,"description":"Spaces (or a string) to indent nested levels with; compact when absent or 0."}
			},"required":["data"],"additionalProperties":false}`, returnsString),
			jsonStringify),
		tools.Typed(info("json:query",
			`Get the value at a path inside a JSON value: "user.name", "items[0].id", "items.0.id", 'a["dotted.key"]'. Returns default (null when absent) if the path does not exist.`,
			`{"type":"object","properties":{
				"data":{"description":"The value to search (an object or array)."},
				"path":{"type":"string","description":"The path; empty for the value itself."},
				"default":{"description":"Returned when the path does not exist."}
			},"required":["data","path"],"additionalProperties":false}`, arbitraryJSON),
			jsonQuery),
	}
}

func jsonParse(_ context.Context, a struct {
	Data string `json:"data"`
}) (any, error) {
	if strings.TrimSpace(a.Data) == "" {
		return nil, errors.New("data is empty")
	}
	// Unmarshal, unlike Compact, reports where the syntax error is.
	var v json.RawMessage
	if err := json.Unmarshal([]byte(a.Data), &v); err != nil {
		return nil, fmt.Errorf("data is not valid JSON: %s", describeJSONError(a.Data, err))
	}
	return v, nil
}

// describeJSONError adds the line and column to a syntax error.
func describeJSONError(text string, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err.Error()
	}
	before := text[:min(int(se.Offset), len(text))]
	line := strings.Count(before, "\n") + 1
	col := len(before) - strings.LastIndexByte(before, '\n')
	return fmt.Sprintf("%v (line %d, column %d)", se, line, col)
}

func jsonStringify(_ context.Context, a struct {
	Data   json.RawMessage `json:"data"`
	Indent any             `json:"indent"`
}) (any, error) {
	indent := ""
	switch v := a.Indent.(type) {
	case json.Number:
		n, err := v.Int64()
		if err != nil {
			return nil, fmt.Errorf("indent: %w", err)
		}
		indent = strings.Repeat(" ", int(n))
	case string:
		indent = v
	}
	var buf bytes.Buffer
	var err error
	if indent == "" {
		err = json.Compact(&buf, a.Data)
	} else {
		err = json.Indent(&buf, a.Data, "", indent)
	}
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	return buf.String(), nil
}

func jsonQuery(_ context.Context, a struct {
	Data    json.RawMessage `json:"data"`
	Path    string          `json:"path"`
	Default json.RawMessage `json:"default"`
}) (any, error) {
	segs, err := parsePath(a.Path)
	if err != nil {
		return nil, err
	}
	if v, ok := lookup(a.Data, segs); ok {
		return v, nil
	}
	if len(a.Default) > 0 {
		return a.Default, nil
	}
	return nil, nil
}
