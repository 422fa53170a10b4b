package wire

import (
	"bytes"
	"encoding/json"
)

// Marshal is json.Marshal without HTML escaping. Answers are read by people
// and AI clients, never pasted into HTML, and "<b>&" must reach them as
// written rather than as \u003cb\u003e\u0026.
func Marshal(v any) ([]byte, error) { return MarshalIndent(v, "", "") }

// MarshalIndent is json.MarshalIndent without HTML escaping; empty prefix
// and indent give Marshal's compact form.
func MarshalIndent(v any, prefix, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
