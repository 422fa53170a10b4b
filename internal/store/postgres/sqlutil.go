package postgres

import (
	"encoding/json"

	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// nullJSON sends an absent JSON value as NULL.
func nullJSON(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return raw
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
