package tools

import "encoding/json"

// renderedKeywords are the JSON Schema keywords a declaration renders
// (tsSchema), plus identifiers that carry nothing a caller needs.
var renderedKeywords = map[string]bool{
	"type": true, "enum": true, "const": true, "$ref": true, "nullable": true,
	"properties": true, "required": true, "additionalProperties": true,
	"items": true, "prefixItems": true, "anyOf": true, "oneOf": true, "allOf": true,
	"$defs": true, "definitions": true, "$schema": true, "$id": true,
}

// DeclarationCovers reports whether a declaration rendered from schema says
// everything the schema does, so discover may leave the schema out: no
// constraint the TypeScript cannot express (minimum, pattern, format, …) and
// no description or default except on properties, where the declaration
// writes them as doc comments. An absent schema is covered; one that does
// not parse is not.
func DeclarationCovers(schema json.RawMessage) bool {
	if len(schema) == 0 {
		return true
	}
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		return false
	}
	return walker{}.covered(v, false)
}

// walker walks schema nodes; inDefs is set below $defs and definitions,
// where a $ref may chain or recurse past what a declaration renders.
type walker struct{ inDefs bool }

// covered walks one schema node; property says it is the value of a
// "properties" entry.
func (w walker) covered(node any, property bool) bool {
	obj, ok := node.(map[string]any)
	if !ok {
		_, isBool := node.(bool)
		return isBool
	}
	for k, v := range obj {
		switch k {
		case "description", "default":
			if !property {
				return false
			}
		case "$ref":
			if w.inDefs {
				return false
			}
		case "properties", "$defs", "definitions":
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			sw := walker{inDefs: w.inDefs || k != "properties"}
			for _, sub := range m {
				if !sw.covered(sub, k == "properties") {
					return false
				}
			}
		case "items", "additionalProperties":
			if list, ok := v.([]any); ok && k == "items" {
				if !w.coveredAll(list) {
					return false
				}
			} else if !w.covered(v, false) {
				return false
			}
		case "prefixItems", "anyOf", "oneOf", "allOf":
			list, ok := v.([]any)
			if !ok || !w.coveredAll(list) {
				return false
			}
		default:
			if !renderedKeywords[k] {
				return false
			}
		}
	}
	return true
}

func (w walker) coveredAll(list []any) bool {
	for _, sub := range list {
		if !w.covered(sub, false) {
			return false
		}
	}
	return true
}
