package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// GlobalToolEdges counts the distinct orgs sharing each edge among the
// newest shared edges: each org's edge once (its newest project's), and at
// most store.SharedPerOrg of one org's, so that no org, however many
// projects it has, pushes the others' edges out of the window.
func (s *Store) GlobalToolEdges(ctx context.Context, q store.GlobalEdgeQuery) ([]store.GlobalEdge, error) {
	window := storeutil.SharedWindow(q.Window)
	rows, err := s.pool.Query(ctx, `SELECT from_tool, to_tool, COUNT(DISTINCT org) AS orgs FROM (
			SELECT from_tool, to_tool, org FROM (
				SELECT org, from_tool, to_tool, updated_at,
					ROW_NUMBER() OVER (PARTITION BY org ORDER BY updated_at DESC, from_tool, to_tool) AS nth FROM (
					SELECT org, from_tool, to_tool, MAX(updated_at) AS updated_at FROM tool_edges
					WHERE shared GROUP BY org, from_tool, to_tool) per_org) ranked
			WHERE nth <= $1 ORDER BY updated_at DESC LIMIT $2) recent
		GROUP BY from_tool, to_tool HAVING COUNT(DISTINCT org) >= $3
		ORDER BY orgs DESC, from_tool, to_tool LIMIT $4`,
		store.SharedPerOrg(window), window, max(q.MinOrgs, 1), storeutil.SharedLimit(q.Limit))
	if err != nil {
		return nil, wrap(ctx, "global tool edges", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.GlobalEdge, error) {
		var e store.GlobalEdge
		err := r.Scan(&e.From, &e.To, &e.Orgs)
		return e, err
	})
	if err != nil {
		return nil, wrap(ctx, "global tool edges", err)
	}
	return out, nil
}

// PutToolTypes upserts scope's tool types and keeps its newest.
func (s *Store) PutToolTypes(ctx context.Context, sc store.Scope, types []store.ToolType) error {
	if err := storeutil.CheckToolTypes(types); err != nil {
		return wrap(ctx, "put tool types", err)
	}
	now := storeutil.Now()
	return wrap(ctx, "put tool types", pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, t := range types {
			b.Queue(`INSERT INTO tool_types (org, project, tool_id, output_schema, shared, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6)
				ON CONFLICT (org, project, tool_id)
				DO UPDATE SET output_schema = excluded.output_schema, shared = excluded.shared, updated_at = excluded.updated_at`,
				sc.Org, sc.Project, t.Tool, nullJSON(t.Schema), t.Shared, now)
		}
		b.Queue(`DELETE FROM tool_types WHERE org = $1 AND project = $2 AND tool_id IN (
				SELECT tool_id FROM tool_types WHERE org = $1 AND project = $2
				ORDER BY updated_at DESC, tool_id OFFSET $3)`,
			sc.Org, sc.Project, store.MaxToolTypes)
		return tx.SendBatch(ctx, b).Close()
	}))
}

// ToolTypes returns scope's tool types, by tool.
func (s *Store) ToolTypes(ctx context.Context, sc store.Scope) ([]store.ToolType, error) {
	rows, err := s.pool.Query(ctx, `SELECT tool_id, output_schema, shared FROM tool_types
		WHERE org = $1 AND project = $2 ORDER BY tool_id LIMIT $3`, sc.Org, sc.Project, store.MaxToolTypes)
	if err != nil {
		return nil, wrap(ctx, "tool types", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.ToolType, error) {
		var t store.ToolType
		var schema []byte
		err := r.Scan(&t.Tool, &schema, &t.Shared)
		t.Schema = schema
		return t, err
	})
	if err != nil {
		return nil, wrap(ctx, "tool types", err)
	}
	return out, nil
}

// SharedToolTypes returns the newest shared tool types of every tenant, at
// most store.SharedPerOrg of one org's, so that no org, however many
// projects it has, pushes the others' types out of the read.
func (s *Store) SharedToolTypes(ctx context.Context, limit int) ([]store.SharedToolType, error) {
	limit = storeutil.SharedLimit(limit)
	rows, err := s.pool.Query(ctx, `SELECT org, project, tool_id, output_schema FROM (
			SELECT org, project, tool_id, output_schema, updated_at,
				ROW_NUMBER() OVER (PARTITION BY org ORDER BY updated_at DESC, project, tool_id) AS nth
			FROM tool_types WHERE shared) ranked
		WHERE nth <= $1 ORDER BY updated_at DESC, org, project, tool_id LIMIT $2`, store.SharedPerOrg(limit), limit)
	if err != nil {
		return nil, wrap(ctx, "shared tool types", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.SharedToolType, error) {
		var t store.SharedToolType
		var schema []byte
		err := r.Scan(&t.Scope.Org, &t.Scope.Project, &t.Tool, &schema)
		t.Schema = schema
		return t, err
	})
	if err != nil {
		return nil, wrap(ctx, "shared tool types", err)
	}
	return out, nil
}

// Unshare withdraws the contributions of scope (of every project of its
// org when it names none).
func (s *Store) Unshare(ctx context.Context, sc store.Scope) error {
	if err := storeutil.CheckUnshare(sc); err != nil {
		return wrap(ctx, "unshare", err)
	}
	return wrap(ctx, "unshare", pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, table := range []string{"tool_edges", "tool_types"} {
			b.Queue(`UPDATE `+table+` SET shared = false WHERE org = $1 AND ($2 = '' OR project = $2) AND shared`, sc.Org, sc.Project)
		}
		return tx.SendBatch(ctx, b).Close()
	}))
}
