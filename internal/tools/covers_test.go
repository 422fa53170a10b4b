package tools

import (
	"encoding/json"
	"testing"
)

func TestDeclarationCovers(t *testing.T) {
	cases := map[string]struct {
		schema string
		want   bool
	}{
		"absent":                     {``, true},
		"types, enums, described":    {`{"type":"object","properties":{"a":{"type":"string","description":"x","default":"y"},"b":{"enum":[1,2]},"c":{"type":"array","items":{"type":"number"}}},"required":["a"],"additionalProperties":false}`, true},
		"ref into defs":              {`{"type":"object","properties":{"u":{"$ref":"#/$defs/u"}},"$defs":{"u":{"enum":["C","F"]}}}`, true},
		"minimum is lost":            {`{"type":"object","properties":{"n":{"type":"integer","minimum":1}}}`, false},
		"pattern deep in items":      {`{"type":"object","properties":{"xs":{"type":"array","items":{"type":"string","pattern":"^a"}}}}`, false},
		"format in anyOf":            {`{"anyOf":[{"type":"string","format":"date"},{"type":"null"}]}`, false},
		"root description":           {`{"type":"object","description":"not rendered"}`, false},
		"description on items":       {`{"type":"array","items":{"type":"string","description":"not rendered"}}`, false},
		"recursive def":              {`{"$ref":"#/$defs/n","$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}}}`, false},
		"garbled":                    {`{"type":`, false},
		"properties not an object":   {`{"properties":[1]}`, false},
		"anyOf not a list":           {`{"anyOf":{"type":"string"}}`, false},
		"boolean subschemas":         {`{"type":"object","properties":{"a":true,"b":false}}`, true},
		"non-schema property values": {`{"type":"object","properties":{"a":3}}`, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := DeclarationCovers(json.RawMessage(c.schema)); got != c.want {
				t.Fatalf("DeclarationCovers(%s) = %v, want %v", c.schema, got, c.want)
			}
		})
	}
}
