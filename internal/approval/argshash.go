package approval

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// ArgsHash is the SHA-256 hex of args in canonical form: object keys sorted,
// insignificant whitespace dropped, numbers kept as written. Two runs of the
// same code produce the same hash even when a JS engine orders keys
// differently. Empty args hash like JSON null; bytes that are not JSON are
// hashed as they are.
func ArgsHash(args json.RawMessage) string {
	sum := sha256.Sum256(canonicalJSON(args))
	return hex.EncodeToString(sum[:])
}

func canonicalJSON(raw json.RawMessage) []byte {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("null")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // no float round trip: 9007199254740993 stays itself
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return raw
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// Maps encode with sorted keys; a decoded value always re-encodes.
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
