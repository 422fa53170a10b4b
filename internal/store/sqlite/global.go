package sqlite

import (
	"context"
	"database/sql"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// GlobalToolEdges counts the distinct orgs sharing each edge among the
// newest shared edges: each org's edge once (its newest project's), and at
// most store.SharedPerOrg of one org's, so that no org, however many
// projects it has, pushes the others' edges out of the window.
func (s *Store) GlobalToolEdges(ctx context.Context, q store.GlobalEdgeQuery) ([]store.GlobalEdge, error) {
	window := storeutil.SharedWindow(q.Window)
	rows, err := s.r.QueryContext(ctx, `SELECT from_tool, to_tool, COUNT(DISTINCT org) AS orgs FROM (
			SELECT from_tool, to_tool, org FROM (
				SELECT org, from_tool, to_tool, updated_at,
					ROW_NUMBER() OVER (PARTITION BY org ORDER BY updated_at DESC, from_tool, to_tool) AS nth FROM (
					SELECT org, from_tool, to_tool, MAX(updated_at) AS updated_at FROM tool_edges
					WHERE shared = 1 GROUP BY org, from_tool, to_tool))
			WHERE nth <= $1 ORDER BY updated_at DESC LIMIT $2)
		GROUP BY from_tool, to_tool HAVING COUNT(DISTINCT org) >= $3
		ORDER BY orgs DESC, from_tool, to_tool LIMIT $4`,
		store.SharedPerOrg(window), window, max(q.MinOrgs, 1), storeutil.SharedLimit(q.Limit))
	if err != nil {
		return nil, wrap("global tool edges", err)
	}
	defer rows.Close()
	out := []store.GlobalEdge{}
	for rows.Next() {
		var e store.GlobalEdge
		if err := rows.Scan(&e.From, &e.To, &e.Orgs); err != nil {
			return nil, wrap("global tool edges", err)
		}
		out = append(out, e)
	}
	return out, wrap("global tool edges", rows.Err())
}

// PutToolTypes upserts scope's tool types and keeps its newest.
func (s *Store) PutToolTypes(ctx context.Context, sc store.Scope, types []store.ToolType) (err error) {
	if err := storeutil.CheckToolTypes(types); err != nil {
		return wrap("put tool types", err)
	}
	now := formatTime(storeutil.Now())
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return wrap("put tool types: begin", err)
	}
	defer rollbackUnlessCommitted(tx, &err)
	for _, t := range types {
		if _, err := tx.ExecContext(ctx, `INSERT INTO tool_types (org, project, tool_id, output_schema, shared, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (org, project, tool_id)
			DO UPDATE SET output_schema = excluded.output_schema, shared = excluded.shared, updated_at = excluded.updated_at`,
			sc.Org, sc.Project, t.Tool, string(t.Schema), t.Shared, now); err != nil {
			return wrap("put tool type", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM tool_types WHERE org = $1 AND project = $2 AND tool_id IN (
			SELECT tool_id FROM tool_types WHERE org = $1 AND project = $2
			ORDER BY updated_at DESC, tool_id LIMIT -1 OFFSET $3)`,
		sc.Org, sc.Project, store.MaxToolTypes); err != nil {
		return wrap("put tool types: keep the newest", err)
	}
	return wrap("put tool types: commit", tx.Commit())
}

// ToolTypes returns scope's tool types, by tool.
func (s *Store) ToolTypes(ctx context.Context, sc store.Scope) ([]store.ToolType, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT tool_id, output_schema, shared FROM tool_types
		WHERE org = $1 AND project = $2 ORDER BY tool_id LIMIT $3`, sc.Org, sc.Project, store.MaxToolTypes)
	if err != nil {
		return nil, wrap("tool types", err)
	}
	defer rows.Close()
	out := []store.ToolType{}
	for rows.Next() {
		var t store.ToolType
		var schema sql.NullString
		if err := rows.Scan(&t.Tool, &schema, &t.Shared); err != nil {
			return nil, wrap("tool types", err)
		}
		t.Schema = rawJSON(schema)
		out = append(out, t)
	}
	return out, wrap("tool types", rows.Err())
}

// SharedToolTypes returns the newest shared tool types of every tenant, at
// most store.SharedPerOrg of one org's, so that no org, however many
// projects it has, pushes the others' types out of the read.
func (s *Store) SharedToolTypes(ctx context.Context, limit int) ([]store.SharedToolType, error) {
	limit = storeutil.SharedLimit(limit)
	rows, err := s.r.QueryContext(ctx, `SELECT org, project, tool_id, output_schema FROM (
			SELECT org, project, tool_id, output_schema, updated_at,
				ROW_NUMBER() OVER (PARTITION BY org ORDER BY updated_at DESC, project, tool_id) AS nth
			FROM tool_types WHERE shared = 1)
		WHERE nth <= $1 ORDER BY updated_at DESC, org, project, tool_id LIMIT $2`, store.SharedPerOrg(limit), limit)
	if err != nil {
		return nil, wrap("shared tool types", err)
	}
	defer rows.Close()
	out := []store.SharedToolType{}
	for rows.Next() {
		var t store.SharedToolType
		var schema sql.NullString
		if err := rows.Scan(&t.Scope.Org, &t.Scope.Project, &t.Tool, &schema); err != nil {
			return nil, wrap("shared tool types", err)
		}
		t.Schema = rawJSON(schema)
		out = append(out, t)
	}
	return out, wrap("shared tool types", rows.Err())
}

// Unshare withdraws the contributions of scope (of every project of its
// org when it names none).
func (s *Store) Unshare(ctx context.Context, sc store.Scope) (err error) {
	if err := storeutil.CheckUnshare(sc); err != nil {
		return wrap("unshare", err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return wrap("unshare: begin", err)
	}
	defer rollbackUnlessCommitted(tx, &err)
	for _, table := range []string{"tool_edges", "tool_types"} {
		if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET shared = 0
			WHERE org = $1 AND ($2 = '' OR project = $2) AND shared = 1`, sc.Org, sc.Project); err != nil {
			return wrap("unshare "+table, err)
		}
	}
	return wrap("unshare: commit", tx.Commit())
}
