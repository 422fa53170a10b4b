package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// PruneTraces deletes the traces older than r.Before (through the
// traces_age index), then those past the r.Keep newest received of each
// scope (through traces_received), at most r.Limit in all.
func (s *Store) PruneTraces(ctx context.Context, r store.TraceRetention) (int, error) {
	now := time.Now()
	before, after := now.Add(-store.DashboardKeep), now.Add(store.MaxClockSkew)
	for _, table := range storeutil.DashTables {
		if _, err := s.pool.Exec(ctx, storeutil.DashPruneSQL(table), before, after); err != nil {
			return 0, wrap(ctx, "prune "+table, err)
		}
	}
	return storeutil.PruneTraces(ctx, r, storeutil.Pruner{ByAge: s.pruneByAge, ScopesOver: s.scopesOver, TrimScope: s.trimScope})
}

func (s *Store) pruneByAge(ctx context.Context, before time.Time, limit int) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM traces WHERE ctid = ANY(ARRAY(
		SELECT ctid FROM traces WHERE started_at < $1 LIMIT $2))`, before, limit)
	if err != nil {
		return 0, wrap(ctx, "prune traces by age", err)
	}
	return int(tag.RowsAffected()), nil
}

// scopesOver lists the scopes holding more than keep traces.
func (s *Store) scopesOver(ctx context.Context, keep int) ([]store.Scope, error) {
	rows, err := s.pool.Query(ctx, `SELECT org, project FROM traces
		GROUP BY org, project HAVING count(*) > $1`, keep)
	if err != nil {
		return nil, wrap(ctx, "prune traces: scopes", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Scope, error) {
		var sc store.Scope
		err := r.Scan(&sc.Org, &sc.Project)
		return sc, err
	})
	return out, wrap(ctx, "prune traces: scopes", err)
}

// trimScope deletes up to limit traces of sc past its keep newest: those
// after the keep-th newest in (received_at, id) order.
func (s *Store) trimScope(ctx context.Context, sc store.Scope, keep, limit int) (int, error) {
	var (
		received time.Time
		id       string
	)
	err := s.pool.QueryRow(ctx, `SELECT received_at, id FROM traces WHERE org = $1 AND project = $2
		ORDER BY received_at DESC, id DESC LIMIT 1 OFFSET $3`, sc.Org, sc.Project, keep-1).Scan(&received, &id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil // keep or fewer
	}
	if err != nil {
		return 0, wrap(ctx, "prune traces of "+sc.Org+"/"+sc.Project, err)
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM traces WHERE ctid = ANY(ARRAY(
		SELECT ctid FROM traces WHERE org = $1 AND project = $2
			AND (received_at < $3 OR (received_at = $3 AND id < $4)) LIMIT $5))`,
		sc.Org, sc.Project, received, id, limit)
	if err != nil {
		return 0, wrap(ctx, "prune traces of "+sc.Org+"/"+sc.Project, err)
	}
	return int(tag.RowsAffected()), nil
}
