// Package jsonkeys finds the keys of a JSON document that a Go type has no
// field for, so a config file with a typo is refused instead of silently
// losing the setting (docs/configuration.md).
package jsonkeys

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/editdist"
)

// Unknown is the first key of a document the target type does not know.
type Unknown struct {
	Path    string // dotted path of the key, e.g. "permissions.allwo"
	Key     string
	Nearest string // the closest valid key at that place, "" if none is close
}

func (u *Unknown) Error() string {
	if u.Nearest != "" {
		return fmt.Sprintf("unknown key %q (did you mean %q?)", u.Path, u.Nearest)
	}
	return fmt.Sprintf("unknown key %q", u.Path)
}

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// Check walks data, which must be valid JSON, against the type of v (a
// struct, or a pointer to one) and returns the first unknown key in
// document order of sorted keys, or nil. Map values and slice elements are
// walked too; types with their own UnmarshalJSON are trusted.
func Check(data []byte, v any) error {
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	if u := walk(doc, reflect.TypeOf(v), ""); u != nil {
		return u
	}
	return nil
}

func walk(doc any, t reflect.Type, path string) *Unknown {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshaler) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := doc.(map[string]any)
		if !ok {
			return nil // a type error, which json.Unmarshal reports
		}
		fields := fieldsOf(t)
		for _, key := range slices.Sorted(maps.Keys(obj)) {
			ft, ok := lookup(fields, key)
			if !ok {
				return &Unknown{Path: join(path, key), Key: key, Nearest: nearest(key, fields)}
			}
			if u := walk(obj[key], ft, join(path, key)); u != nil {
				return u
			}
		}
	case reflect.Map:
		if obj, ok := doc.(map[string]any); ok {
			for _, key := range slices.Sorted(maps.Keys(obj)) {
				if u := walk(obj[key], t.Elem(), join(path, key)); u != nil {
					return u
				}
			}
		}
	case reflect.Slice, reflect.Array:
		if arr, ok := doc.([]any); ok {
			for i, el := range arr {
				if u := walk(el, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); u != nil {
					return u
				}
			}
		}
	}
	return nil
}

type field struct {
	name string
	typ  reflect.Type
}

// fieldsOf lists the JSON names of t's fields as encoding/json sees them,
// embedded structs' fields included.
func fieldsOf(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				out = append(out, fieldsOf(et)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, field{name, f.Type})
	}
	return out
}

// lookup matches like encoding/json: exactly, else case-insensitively.
func lookup(fields []field, key string) (reflect.Type, bool) {
	for _, f := range fields {
		if f.name == key {
			return f.typ, true
		}
	}
	for _, f := range fields {
		if strings.EqualFold(f.name, key) {
			return f.typ, true
		}
	}
	return nil, false
}

// nearest is the valid name closest to key in edit distance, if it is
// close enough to be a likely typo (at most a third of the key's length,
// and at least 2 edits allowed).
func nearest(key string, fields []field) string {
	best, bestD := "", max(2, len(key)/3)+1
	for _, f := range fields {
		if d := editdist.Levenshtein(strings.ToLower(key), strings.ToLower(f.name)); d < bestD {
			best, bestD = f.name, d
		}
	}
	return best
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
