package sqlite

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pml-go/pml/internal/store"
)

// timeLayout is fixed-width so that comparing the TEXT compares the times.
const timeLayout = "2006-01-02T15:04:05.000000Z"

func formatTime(t time.Time) string {
	return t.UTC().Format(timeLayout)
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse stored time %q: %w", s, err)
	}
	return t, nil
}

// nullJSON stores an absent JSON value as NULL.
func nullJSON(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}

func rawJSON(s sql.NullString) json.RawMessage {
	if !s.Valid || s.String == "" {
		return nil
	}
	return json.RawMessage(s.String)
}

func encodeStrings(v []string) (string, error) {
	if v == nil {
		v = []string{}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode string list: %w", err)
	}
	return string(b), nil
}

func decodeStrings(s string) ([]string, error) {
	var v []string
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, fmt.Errorf("decode stored string list: %w", err)
	}
	if v == nil {
		v = []string{}
	}
	return v, nil
}

// wrap adds context to err and turns "no rows" into store.ErrNotFound.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sqlite: %s: %w", op, store.ErrNotFound)
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}

// rollbackUnlessCommitted is deferred after BeginTx; a rollback after a
// successful commit is a no-op returning sql.ErrTxDone, which is ignored.
func rollbackUnlessCommitted(tx *sql.Tx, errp *error) {
	if *errp == nil {
		return
	}
	if rerr := tx.Rollback(); rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
		*errp = errors.Join(*errp, fmt.Errorf("rollback: %w", rerr))
	}
}

// scanner is *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}
