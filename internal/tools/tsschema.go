package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// tsSchema is the subset of JSON Schema that Declaration renders. It is
// decoded by hand, not through jsonschema.Schema, to keep the source order of
// properties: a declaration listing "path" before "limit" reads as written.
type tsSchema struct {
	Never       bool // the boolean schema false
	Type        []string
	Description string
	Default     json.RawMessage
	Enum        []json.RawMessage
	Const       json.RawMessage
	Ref         string
	Nullable    bool // OpenAPI-style, common in MCP servers

	Properties []tsProperty
	Required   []string
	// AdditionalProperties: nil = absent; Never = false.
	AdditionalProperties *tsSchema

	Items       *tsSchema
	TupleItems  []*tsSchema // prefixItems, or draft-07 array-form items
	AnyOf       []*tsSchema
	AllOf       []*tsSchema
	Defs        map[string]*tsSchema
	Definitions map[string]*tsSchema
}

type tsProperty struct {
	Name   string
	Schema *tsSchema
}

func (s *tsSchema) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch string(data) {
	case "true", "{}":
		return nil
	case "false":
		s.Never = true
		return nil
	}
	var raw struct {
		Type                 json.RawMessage      `json:"type"`
		Description          string               `json:"description"`
		Default              json.RawMessage      `json:"default"`
		Enum                 []json.RawMessage    `json:"enum"`
		Const                json.RawMessage      `json:"const"`
		Ref                  string               `json:"$ref"`
		Nullable             bool                 `json:"nullable"`
		Properties           json.RawMessage      `json:"properties"`
		Required             []string             `json:"required"`
		AdditionalProperties *tsSchema            `json:"additionalProperties"`
		Items                json.RawMessage      `json:"items"`
		PrefixItems          []*tsSchema          `json:"prefixItems"`
		AnyOf                []*tsSchema          `json:"anyOf"`
		OneOf                []*tsSchema          `json:"oneOf"`
		AllOf                []*tsSchema          `json:"allOf"`
		Defs                 map[string]*tsSchema `json:"$defs"`
		Definitions          map[string]*tsSchema `json:"definitions"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*s = tsSchema{
		Description: raw.Description, Default: raw.Default, Enum: raw.Enum, Const: raw.Const,
		Ref: raw.Ref, Nullable: raw.Nullable, Required: raw.Required,
		AdditionalProperties: raw.AdditionalProperties, TupleItems: raw.PrefixItems,
		AnyOf: append(raw.AnyOf, raw.OneOf...), AllOf: raw.AllOf,
		Defs: raw.Defs, Definitions: raw.Definitions,
	}
	if len(raw.Type) > 0 {
		if err := decodeOneOrMany(raw.Type, &s.Type); err != nil {
			return fmt.Errorf("type: %w", err)
		}
	}
	if len(raw.Properties) > 0 {
		props, err := decodeOrderedProperties(raw.Properties)
		if err != nil {
			return fmt.Errorf("properties: %w", err)
		}
		s.Properties = props
	}
	if items := bytes.TrimSpace(raw.Items); len(items) > 0 {
		if items[0] == '[' {
			if err := json.Unmarshal(items, &s.TupleItems); err != nil {
				return fmt.Errorf("items: %w", err)
			}
		} else {
			s.Items = new(tsSchema)
			if err := json.Unmarshal(items, s.Items); err != nil {
				return fmt.Errorf("items: %w", err)
			}
		}
	}
	return nil
}

func decodeOneOrMany(data json.RawMessage, out *[]string) error {
	var one string
	if json.Unmarshal(data, &one) == nil {
		*out = []string{one}
		return nil
	}
	return json.Unmarshal(data, out)
}

// decodeOrderedProperties decodes a "properties" object keeping key order.
func decodeOrderedProperties(data json.RawMessage) ([]tsProperty, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("expected an object, got %v", tok)
	}
	var props []tsProperty
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		ps := new(tsSchema)
		if err := dec.Decode(ps); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		props = append(props, tsProperty{Name: name, Schema: ps})
	}
	return props, nil
}
