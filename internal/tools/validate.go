package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/pml-go/pml/internal/pmlerr"
)

// ErrInvalidSchema is wrapped by Validate when the schema itself cannot be
// compiled; callers holding third-party schemas may choose to skip validation.
var ErrInvalidSchema = errors.New("invalid tool input schema")

// maxCachedSchemas bounds the Validator cache; past it the cache starts over,
// which only costs recompiling.
const maxCachedSchemas = 4096

// Validator checks tool arguments against JSON Schemas, caching each compiled
// schema by its text. Safe for concurrent use.
type Validator struct {
	mu    sync.RWMutex
	cache map[string]*jsonschema.Resolved
}

// NewValidator returns a Validator with an empty cache.
func NewValidator() *Validator {
	return &Validator{cache: map[string]*jsonschema.Resolved{}}
}

// Validate checks that args is a JSON object satisfying schema. An empty
// schema accepts any object; empty args count as {}. A mismatch is a
// *pmlerr.Error TOOL_ERROR whose message names the offending field; a schema
// that does not compile is an error wrapping ErrInvalidSchema.
func (v *Validator) Validate(schema, args json.RawMessage) error {
	instance, err := decodeArgs(args)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(schema)) == 0 {
		return nil
	}
	rs, err := v.compile(schema)
	if err != nil {
		return err
	}
	if err := rs.Validate(instance); err != nil {
		return pmlerr.New(pmlerr.ToolError, "invalid arguments: %s", readableValidation(err)).With("validation", err.Error())
	}
	return nil
}

// decodeArgs decodes args, which must be a JSON object (or empty/null).
func decodeArgs(args json.RawMessage) (map[string]any, error) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return map[string]any{}, nil
	}
	var obj map[string]any
	if err := json.Unmarshal(trimmed, &obj); err != nil {
		return nil, pmlerr.New(pmlerr.ToolError, "invalid arguments: expected a JSON object: %v", err)
	}
	if obj == nil {
		obj = map[string]any{}
	}
	return obj, nil
}

func (v *Validator) compile(schema json.RawMessage) (*jsonschema.Resolved, error) {
	key := string(schema)
	v.mu.RLock()
	rs, ok := v.cache[key]
	v.mu.RUnlock()
	if ok {
		return rs, nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSchema, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSchema, err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.cache) >= maxCachedSchemas {
		clear(v.cache)
	}
	v.cache[key] = rs
	return rs, nil
}

// validatingRE matches one "validating <schema path>: " frame of a
// jsonschema-go error; the last frame is the innermost.
var validatingRE = regexp.MustCompile(`validating ([^:]*): `)

// readableValidation turns jsonschema-go's nested "validating /properties/a/
// items: type: ..." chain into `field "a[]": ...`, the form an AI client can
// act on.
func readableValidation(err error) string {
	msg := err.Error()
	locs := validatingRE.FindAllStringSubmatchIndex(msg, -1)
	if len(locs) == 0 {
		return msg
	}
	last := locs[len(locs)-1]
	field := fieldPath(msg[last[2]:last[3]])
	rest := msg[last[1]:]
	if names, ok := strings.CutPrefix(rest, "required: missing properties: "); ok {
		return describeMissing(field, names)
	}
	if names, ok := strings.CutPrefix(rest, "unexpected additional properties "); ok {
		return "unknown field(s) " + joinField(field, names)
	}
	if field == "" {
		return rest
	}
	return fmt.Sprintf("field %q: %s", field, stripKeyword(rest))
}

// stripKeyword drops the leading "type: " style keyword, which the rest of the
// message already makes clear.
func stripKeyword(s string) string {
	kw, rest, ok := strings.Cut(s, ": ")
	if ok && !strings.ContainsAny(kw, " \"") {
		return rest
	}
	return s
}

func describeMissing(field, namesJSON string) string {
	var names []string
	if json.Unmarshal([]byte(namesJSON), &names) != nil || len(names) == 0 {
		return "missing required field(s) " + namesJSON
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", joinPath(field, n))
	}
	if len(q) == 1 {
		return "missing required field " + q[0]
	}
	return "missing required fields " + strings.Join(q, ", ")
}

func joinField(field, namesJSON string) string {
	var names []string
	if json.Unmarshal([]byte(namesJSON), &names) != nil {
		return namesJSON
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", joinPath(field, n))
	}
	return strings.Join(q, ", ")
}

func joinPath(field, name string) string {
	if field == "" {
		return name
	}
	return field + "." + name
}

// fieldPath converts a JSON Schema location ("/properties/a/items/properties/b")
// into a field path ("a[].b"). Keywords other than properties and items
// (anyOf/0, additionalProperties, ...) carry no field name and are skipped.
func fieldPath(schemaPath string) string {
	parts := strings.Split(strings.TrimPrefix(schemaPath, "/"), "/")
	var b strings.Builder
	for i := 0; i < len(parts); i++ {
		switch parts[i] {
		case "properties", "patternProperties":
			if i+1 < len(parts) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(unescapePointer(parts[i+1]))
				i++
			}
		case "items", "prefixItems", "additionalItems":
			b.WriteString("[]")
			if i+1 < len(parts) && isIndex(parts[i+1]) {
				i++
			}
		case "additionalProperties":
			b.WriteString(".*")
		}
	}
	return b.String()
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}
