package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// AddSeenDiscover records a discover of scope and keeps its most recent.
func (s *Store) AddSeenDiscover(ctx context.Context, sc store.Scope, d store.SeenDiscover) error {
	if err := storeutil.CheckSeenDiscover(d); err != nil {
		return wrap(ctx, "add seen discover", err)
	}
	shown := d.Shown
	if shown == nil {
		shown = []string{}
	}
	return wrap(ctx, "add seen discover", pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO seen_discovers (org, project, caller, family, shown, seen_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			sc.Org, sc.Project, d.Caller, d.Family, shown, d.At)
		b.Queue(`DELETE FROM seen_discovers WHERE id IN (
				SELECT id FROM seen_discovers WHERE org = $1 AND project = $2
				ORDER BY seen_at DESC, id DESC OFFSET $3)`, sc.Org, sc.Project, store.MaxSeenDiscovers)
		return tx.SendBatch(ctx, b).Close()
	}))
}

// TakeSeenDiscovers returns and deletes scope's discovers of caller since.
func (s *Store) TakeSeenDiscovers(ctx context.Context, sc store.Scope, caller string, since time.Time) ([]store.SeenDiscover, error) {
	rows, err := s.pool.Query(ctx, `DELETE FROM seen_discovers WHERE org = $1 AND project = $2 AND caller = $3 AND seen_at >= $4
		RETURNING family, shown, seen_at`, sc.Org, sc.Project, caller, since)
	if err != nil {
		return nil, wrap(ctx, "take seen discovers", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.SeenDiscover, error) {
		d := store.SeenDiscover{Caller: caller}
		err := r.Scan(&d.Family, &d.Shown, &d.At)
		return d, err
	})
	if err != nil {
		return nil, wrap(ctx, "take seen discovers", err)
	}
	storeutil.SortSeenDiscovers(out)
	return out, nil
}

// PutToolRelevance upserts scope's rows and keeps its most recently updated.
func (s *Store) PutToolRelevance(ctx context.Context, sc store.Scope, rows []store.ToolRelevance) error {
	if err := storeutil.CheckToolRelevance(rows); err != nil {
		return wrap(ctx, "put tool relevance", err)
	}
	return wrap(ctx, "put tool relevance", pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, r := range rows {
			if r.Gain <= 0 {
				b.Queue(`DELETE FROM tool_relevance WHERE org = $1 AND project = $2 AND family = $3 AND tool_id = $4`,
					sc.Org, sc.Project, r.Family, r.Tool)
				continue
			}
			b.Queue(`INSERT INTO tool_relevance (org, project, family, tool_id, gain, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6)
				ON CONFLICT (org, project, family, tool_id) DO UPDATE SET gain = excluded.gain, updated_at = excluded.updated_at`,
				sc.Org, sc.Project, r.Family, r.Tool, r.Gain, r.UpdatedAt)
		}
		b.Queue(`DELETE FROM tool_relevance WHERE org = $1 AND project = $2 AND (family, tool_id) IN (
				SELECT family, tool_id FROM tool_relevance WHERE org = $1 AND project = $2
				ORDER BY updated_at DESC, family, tool_id OFFSET $3)`,
			sc.Org, sc.Project, store.MaxToolRelevance)
		return tx.SendBatch(ctx, b).Close()
	}))
}

// ToolRelevance returns scope's rows, by family and tool.
func (s *Store) ToolRelevance(ctx context.Context, sc store.Scope) ([]store.ToolRelevance, error) {
	rows, err := s.pool.Query(ctx, `SELECT family, tool_id, gain, updated_at FROM tool_relevance
		WHERE org = $1 AND project = $2 ORDER BY family, tool_id LIMIT $3`, sc.Org, sc.Project, store.MaxToolRelevance)
	if err != nil {
		return nil, wrap(ctx, "tool relevance", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.ToolRelevance, error) {
		var t store.ToolRelevance
		err := r.Scan(&t.Family, &t.Tool, &t.Gain, &t.UpdatedAt)
		return t, err
	})
	if err != nil {
		return nil, wrap(ctx, "tool relevance", err)
	}
	return out, nil
}
