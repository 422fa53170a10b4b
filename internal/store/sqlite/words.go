package sqlite

import (
	"context"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// AddToolWords adds to scope's words of tools and keeps its newest
// (store.Store).
func (s *Store) AddToolWords(ctx context.Context, sc store.Scope, rows []store.ToolWord) (err error) {
	if err := storeutil.CheckToolWords(rows); err != nil {
		return wrap("add tool words", err)
	}
	now := formatTime(storeutil.Now())
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return wrap("add tool words: begin", err)
	}
	defer rollbackUnlessCommitted(tx, &err)
	// Prepared once for the batch: parsing the statement for each of up to
	// store.MaxToolWords rows took more time than running it.
	ins, err := tx.PrepareContext(ctx, `INSERT INTO tool_words (org, project, tool_id, word, weight, shared, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (org, project, tool_id, word)
		DO UPDATE SET weight = tool_words.weight + excluded.weight, shared = excluded.shared, updated_at = excluded.updated_at`)
	if err != nil {
		return wrap("add tool words: prepare", err)
	}
	defer ins.Close()
	for _, r := range rows {
		if _, err := ins.ExecContext(ctx, sc.Org, sc.Project, r.Tool, r.Word, r.Weight, r.Shared, now); err != nil {
			return wrap("add tool word", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM tool_words WHERE org = $1 AND project = $2 AND (tool_id, word) IN (
			SELECT tool_id, word FROM tool_words WHERE org = $1 AND project = $2
			ORDER BY updated_at DESC, tool_id, word LIMIT -1 OFFSET $3)`,
		sc.Org, sc.Project, store.MaxToolWords); err != nil {
		return wrap("add tool words: keep the newest", err)
	}
	return wrap("add tool words: commit", tx.Commit())
}

// ToolWords returns scope's words of tools, newest first (store.Store).
func (s *Store) ToolWords(ctx context.Context, sc store.Scope) ([]store.ToolWord, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT tool_id, word, weight, shared, updated_at FROM tool_words
		WHERE org = $1 AND project = $2 ORDER BY updated_at DESC, tool_id, word LIMIT $3`, sc.Org, sc.Project, store.MaxToolWords)
	if err != nil {
		return nil, wrap("tool words", err)
	}
	defer rows.Close()
	out := []store.ToolWord{}
	for rows.Next() {
		var w store.ToolWord
		var at string
		if err := rows.Scan(&w.Tool, &w.Word, &w.Weight, &w.Shared, &at); err != nil {
			return nil, wrap("tool words", err)
		}
		if w.UpdatedAt, err = parseTime(at); err != nil {
			return nil, wrap("tool words", err)
		}
		out = append(out, w)
	}
	return out, wrap("tool words", rows.Err())
}

// GlobalToolWords counts the distinct orgs of each shared word of a tool,
// each org's newest shared rows at most (store.Store).
func (s *Store) GlobalToolWords(ctx context.Context, minOrgs, limit int) ([]store.GlobalToolWord, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT tool_id, word, COUNT(DISTINCT org) AS orgs FROM (
			SELECT tool_id, word, org, ROW_NUMBER() OVER (PARTITION BY org ORDER BY updated_at DESC, tool_id, word) AS n
			FROM tool_words WHERE shared = 1)
		WHERE n <= $1
		GROUP BY tool_id, word HAVING COUNT(DISTINCT org) >= $2
		ORDER BY orgs DESC, tool_id, word LIMIT $3`,
		store.MaxSharedRowsPerOrg, max(minOrgs, 1), storeutil.SharedLimit(limit))
	if err != nil {
		return nil, wrap("global tool words", err)
	}
	defer rows.Close()
	out := []store.GlobalToolWord{}
	for rows.Next() {
		var w store.GlobalToolWord
		if err := rows.Scan(&w.Tool, &w.Word, &w.Orgs); err != nil {
			return nil, wrap("global tool words", err)
		}
		out = append(out, w)
	}
	return out, wrap("global tool words", rows.Err())
}

// WithdrawToolWords unshares scope's words of tools (store.Store).
func (s *Store) WithdrawToolWords(ctx context.Context, sc store.Scope) error {
	if err := storeutil.CheckUnshare(sc); err != nil {
		return wrap("withdraw tool words", err)
	}
	q := `UPDATE tool_words SET shared = 0 WHERE org = $1 AND shared = 1`
	args := []any{sc.Org}
	if sc.Project != "" {
		q += ` AND project = $2`
		args = append(args, sc.Project)
	}
	_, err := s.w.ExecContext(ctx, q, args...)
	return wrap("withdraw tool words", err)
}
