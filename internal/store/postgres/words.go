package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// AddToolWords adds to scope's words of tools and keeps its newest
// (store.Store).
func (s *Store) AddToolWords(ctx context.Context, sc store.Scope, rows []store.ToolWord) error {
	if err := storeutil.CheckToolWords(rows); err != nil {
		return wrap(ctx, "add tool words", err)
	}
	now := storeutil.Now()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, r := range rows {
			if _, err := tx.Exec(ctx, `INSERT INTO tool_words (org, project, tool_id, word, weight, shared, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7)
				ON CONFLICT (org, project, tool_id, word)
				DO UPDATE SET weight = tool_words.weight + excluded.weight, shared = excluded.shared, updated_at = excluded.updated_at`,
				sc.Org, sc.Project, r.Tool, r.Word, r.Weight, r.Shared, now); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `DELETE FROM tool_words WHERE org = $1 AND project = $2 AND (tool_id, word) IN (
				SELECT tool_id, word FROM tool_words WHERE org = $1 AND project = $2
				ORDER BY updated_at DESC, tool_id, word OFFSET $3)`,
			sc.Org, sc.Project, store.MaxToolWords)
		return err
	})
	return wrap(ctx, "add tool words", err)
}

// ToolWords returns scope's words of tools, newest first (store.Store).
func (s *Store) ToolWords(ctx context.Context, sc store.Scope) ([]store.ToolWord, error) {
	rows, err := s.pool.Query(ctx, `SELECT tool_id, word, weight, shared, updated_at FROM tool_words
		WHERE org = $1 AND project = $2 ORDER BY updated_at DESC, tool_id, word LIMIT $3`, sc.Org, sc.Project, store.MaxToolWords)
	if err != nil {
		return nil, wrap(ctx, "tool words", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.ToolWord, error) {
		var w store.ToolWord
		err := r.Scan(&w.Tool, &w.Word, &w.Weight, &w.Shared, &w.UpdatedAt)
		w.UpdatedAt = w.UpdatedAt.UTC()
		return w, err
	})
	if out == nil {
		out = []store.ToolWord{}
	}
	return out, wrap(ctx, "tool words", err)
}

// GlobalToolWords counts the distinct orgs of each shared word of a tool,
// each org's newest shared rows at most (store.Store).
func (s *Store) GlobalToolWords(ctx context.Context, minOrgs, limit int) ([]store.GlobalToolWord, error) {
	rows, err := s.pool.Query(ctx, `SELECT tool_id, word, COUNT(DISTINCT org) AS orgs FROM (
			SELECT tool_id, word, org, ROW_NUMBER() OVER (PARTITION BY org ORDER BY updated_at DESC, tool_id, word) AS n
			FROM tool_words WHERE shared) AS recent
		WHERE n <= $1
		GROUP BY tool_id, word HAVING COUNT(DISTINCT org) >= $2
		ORDER BY orgs DESC, tool_id, word LIMIT $3`,
		store.MaxSharedRowsPerOrg, max(minOrgs, 1), storeutil.SharedLimit(limit))
	if err != nil {
		return nil, wrap(ctx, "global tool words", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.GlobalToolWord, error) {
		var w store.GlobalToolWord
		var orgs int64
		err := r.Scan(&w.Tool, &w.Word, &orgs)
		w.Orgs = int(orgs)
		return w, err
	})
	if out == nil {
		out = []store.GlobalToolWord{}
	}
	return out, wrap(ctx, "global tool words", err)
}

// WithdrawToolWords unshares scope's words of tools (store.Store).
func (s *Store) WithdrawToolWords(ctx context.Context, sc store.Scope) error {
	if err := storeutil.CheckUnshare(sc); err != nil {
		return wrap(ctx, "withdraw tool words", err)
	}
	q := `UPDATE tool_words SET shared = false WHERE org = $1 AND shared`
	args := []any{sc.Org}
	if sc.Project != "" {
		q += ` AND project = $2`
		args = append(args, sc.Project)
	}
	_, err := s.pool.Exec(ctx, q, args...)
	return wrap(ctx, "withdraw tool words", err)
}
