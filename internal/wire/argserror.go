package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/pml-go/pml/internal/pmlerr"
)

// argsError is the INVALID_REQUEST of a tool's arguments that did not
// decode, in the tool's language: a value of the wrong JSON type names the
// argument and the type its schema asks for ("code must be a string"),
// rather than Go's "cannot unmarshal number into Go struct field
// ExecuteRequest.code of type string", which names our types, not the
// caller's arguments.
func argsError(what string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return pmlerr.New(pmlerr.InvalidRequest, "%s must be %s, not %s", te.Field, jsonType(te.Type), article(te.Value)).
			With("argument", te.Field)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return pmlerr.New(pmlerr.InvalidRequest, "%s are not valid JSON: %v", what, err)
	}
	return pmlerr.New(pmlerr.InvalidRequest, "invalid %s: %v", what, err)
}

// jsonType is the JSON type a Go type decodes from, as a schema says it.
func jsonType(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return fmt.Sprintf("of another type than %s", t)
}

// article is encoding/json's name of the value it found ("number",
// "string", "bool", "array", "object", "number 1.5") with an article.
func article(v string) string {
	switch {
	case v == "bool":
		return "true or false"
	case v == "array", v == "object":
		return "an " + v
	case v == "":
		return "that"
	}
	return "a " + v
}
