package fqdn

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// CanonicalJSON encodes v so that equal values always give equal bytes: object
// keys sorted, no insignificant whitespace, no HTML escaping (so the bytes
// match what other JSON encoders produce for the same data), numbers kept as
// written. Struct field order and the spacing of a json.RawMessage therefore
// do not change a hash computed over the result.
func CanonicalJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	// A round trip through generic values sorts every object's keys (the
	// encoder sorts map keys) and drops the input's own formatting.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(generic); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
