package postgres

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// nullJSON sends an absent JSON value as NULL, and JSON that jsonb would
// refuse in a form it accepts (see withoutNUL).
func nullJSON(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	if bytes.Contains(raw, []byte(`\u0000`)) {
		return withoutNUL(raw)
	}
	return raw
}

// withoutNUL replaces U+0000 in the strings and keys of raw by U+FFFD.
// jsonb cannot store U+0000 and would reject the whole value, and with it
// a batch of traces whose tool output happened to contain a NUL byte. On
// the rare path where "\u0000" appears, raw is decoded and re-encoded
// (numbers kept exact); if that fails raw goes as is and PostgreSQL reports.
func withoutNUL(raw json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	out, err := json.Marshal(replaceNUL(v))
	if err != nil {
		return raw
	}
	return out
}

func replaceNUL(v any) any {
	const nul, replacement = "\x00", "\uFFFD"
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, nul, replacement)
	case []any:
		for i := range x {
			x[i] = replaceNUL(x[i])
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[strings.ReplaceAll(k, nul, replacement)] = replaceNUL(e)
		}
		return out
	}
	return v
}

// rawJSON returns a stored jsonb value, nil for NULL.
func rawJSON(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return json.RawMessage(b)
}

// page clamps a filter's limit and offset; no limit becomes LIMIT NULL,
// PostgreSQL's "all rows".
func page(limit, offset int) (any, int) {
	l, o := storeutil.Page(limit, offset)
	if l == 0 {
		return nil, o
	}
	return l, o
}

// scanner is pgx.Row or pgx.Rows.
type scanner interface {
	Scan(dest ...any) error
}
