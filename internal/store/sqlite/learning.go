package sqlite

import (
	"context"
	"database/sql"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// RecordCapabilityRuns appends outcomes to the capability's recent runs.
func (s *Store) RecordCapabilityRuns(ctx context.Context, id, outcomes string) error {
	if err := storeutil.CheckOutcomes(outcomes); err != nil {
		return wrap("record capability runs", err)
	}
	res, err := s.w.ExecContext(ctx, `UPDATE capabilities SET recent_runs = substr(recent_runs || $1, -$2) WHERE id = $3`,
		outcomes, store.MaxRecentRuns, id)
	if err != nil {
		return wrap("record capability run", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return wrap("record capability run", err)
	}
	if n == 0 {
		return wrap("record capability run "+id, sql.ErrNoRows)
	}
	return nil
}

// AddToolEdges adds edges to scope's tool graph and keeps its heaviest.
func (s *Store) AddToolEdges(ctx context.Context, sc store.Scope, edges []store.ToolEdge) (err error) {
	if err := storeutil.CheckToolEdges(edges); err != nil {
		return wrap("add tool edges", err)
	}
	now := formatTime(storeutil.Now())
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return wrap("add tool edges: begin", err)
	}
	defer rollbackUnlessCommitted(tx, &err)
	// Prepared once for the batch (up to store.MaxToolEdges rows), as
	// AddToolWords: parsing it per row cost more than running it.
	ins, err := tx.PrepareContext(ctx, `INSERT INTO tool_edges (org, project, from_tool, to_tool, feeds, follows, shared, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (org, project, from_tool, to_tool)
		DO UPDATE SET feeds = feeds + excluded.feeds, follows = follows + excluded.follows,
			shared = excluded.shared, updated_at = excluded.updated_at`)
	if err != nil {
		return wrap("add tool edges: prepare", err)
	}
	defer ins.Close()
	for _, e := range edges {
		if _, err := ins.ExecContext(ctx, sc.Org, sc.Project, e.From, e.To, e.Feeds, e.Follows, e.Shared, now); err != nil {
			return wrap("add tool edge", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM tool_edges WHERE org = $1 AND project = $2 AND (from_tool, to_tool) IN (
			SELECT from_tool, to_tool FROM tool_edges WHERE org = $1 AND project = $2
			ORDER BY feeds + follows DESC, updated_at DESC LIMIT -1 OFFSET $3)`,
		sc.Org, sc.Project, store.MaxToolEdges); err != nil {
		return wrap("add tool edges: keep the heaviest", err)
	}
	return wrap("add tool edges: commit", tx.Commit())
}

// ToolEdges returns scope's tool graph, heaviest edges first.
func (s *Store) ToolEdges(ctx context.Context, sc store.Scope) ([]store.ToolEdge, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT from_tool, to_tool, feeds, follows, shared FROM tool_edges
		WHERE org = $1 AND project = $2 ORDER BY feeds + follows DESC, from_tool, to_tool LIMIT $3`,
		sc.Org, sc.Project, store.MaxToolEdges)
	if err != nil {
		return nil, wrap("tool edges", err)
	}
	defer rows.Close()
	out := []store.ToolEdge{}
	for rows.Next() {
		var e store.ToolEdge
		if err := rows.Scan(&e.From, &e.To, &e.Feeds, &e.Follows, &e.Shared); err != nil {
			return nil, wrap("tool edges", err)
		}
		out = append(out, e)
	}
	return out, wrap("tool edges", rows.Err())
}

// UpdateLearned replaces the learned fields of the capability c.ID of c.Scope.
func (s *Store) UpdateLearned(ctx context.Context, c store.Capability) error {
	res, err := s.w.ExecContext(ctx, `UPDATE capabilities
		SET code = $1, args_schema = $2, output_schema = $3, params_lifted = $4, updated_at = $5
		WHERE id = $6 AND org = $7 AND project = $8`,
		c.Code, nullJSON(c.ArgsSchema), nullJSON(c.OutputSchema), c.ParamsLifted, formatTime(storeutil.Now()),
		c.ID, c.Scope.Org, c.Scope.Project)
	if err != nil {
		return wrap("update learned capability", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return wrap("update learned capability", err)
	}
	if n == 0 {
		return wrap("update learned capability "+c.ID, sql.ErrNoRows)
	}
	return nil
}
