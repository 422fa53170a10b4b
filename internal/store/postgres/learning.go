package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// RecordCapabilityRuns appends outcomes to the capability's recent runs.
func (s *Store) RecordCapabilityRuns(ctx context.Context, id, outcomes string) error {
	if err := storeutil.CheckOutcomes(outcomes); err != nil {
		return wrap(ctx, "record capability runs", err)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE capabilities SET recent_runs = right(recent_runs || $1, $2) WHERE id = $3`,
		outcomes, store.MaxRecentRuns, id)
	if err != nil {
		return wrap(ctx, "record capability run", err)
	}
	if tag.RowsAffected() == 0 {
		return wrap(ctx, "record capability run "+id, pgx.ErrNoRows)
	}
	return nil
}

// AddToolEdges adds edges to scope's tool graph and keeps its heaviest.
func (s *Store) AddToolEdges(ctx context.Context, sc store.Scope, edges []store.ToolEdge) error {
	if err := storeutil.CheckToolEdges(edges); err != nil {
		return wrap(ctx, "add tool edges", err)
	}
	now := storeutil.Now()
	return wrap(ctx, "add tool edges", pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, e := range edges {
			b.Queue(`INSERT INTO tool_edges (org, project, from_tool, to_tool, feeds, follows, shared, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
				ON CONFLICT (org, project, from_tool, to_tool)
				DO UPDATE SET feeds = tool_edges.feeds + excluded.feeds, follows = tool_edges.follows + excluded.follows,
					shared = excluded.shared, updated_at = excluded.updated_at`,
				sc.Org, sc.Project, e.From, e.To, e.Feeds, e.Follows, e.Shared, now)
		}
		b.Queue(`DELETE FROM tool_edges WHERE org = $1 AND project = $2 AND (from_tool, to_tool) IN (
				SELECT from_tool, to_tool FROM tool_edges WHERE org = $1 AND project = $2
				ORDER BY feeds + follows DESC, updated_at DESC OFFSET $3)`,
			sc.Org, sc.Project, store.MaxToolEdges)
		return tx.SendBatch(ctx, b).Close()
	}))
}

// ToolEdges returns scope's tool graph, heaviest edges first.
func (s *Store) ToolEdges(ctx context.Context, sc store.Scope) ([]store.ToolEdge, error) {
	rows, err := s.pool.Query(ctx, `SELECT from_tool, to_tool, feeds, follows, shared FROM tool_edges
		WHERE org = $1 AND project = $2 ORDER BY feeds + follows DESC, from_tool, to_tool LIMIT $3`,
		sc.Org, sc.Project, store.MaxToolEdges)
	if err != nil {
		return nil, wrap(ctx, "tool edges", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.ToolEdge, error) {
		var e store.ToolEdge
		err := r.Scan(&e.From, &e.To, &e.Feeds, &e.Follows, &e.Shared)
		return e, err
	})
	if err != nil {
		return nil, wrap(ctx, "tool edges", err)
	}
	return out, nil
}

// UpdateLearned replaces the learned fields of the capability c.ID of c.Scope.
func (s *Store) UpdateLearned(ctx context.Context, c store.Capability) error {
	tag, err := s.pool.Exec(ctx, `UPDATE capabilities
		SET code = $1, args_schema = $2, output_schema = $3, params_lifted = $4, updated_at = $5
		WHERE id = $6 AND org = $7 AND project = $8`,
		c.Code, nullJSON(c.ArgsSchema), nullJSON(c.OutputSchema), c.ParamsLifted, storeutil.Now(),
		c.ID, c.Scope.Org, c.Scope.Project)
	if err != nil {
		return wrap(ctx, "update learned capability", err)
	}
	if tag.RowsAffected() == 0 {
		return wrap(ctx, "update learned capability "+c.ID, pgx.ErrNoRows)
	}
	return nil
}
