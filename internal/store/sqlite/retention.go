package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// PruneTraces deletes the traces older than r.Before (through the
// traces_age index), then those past the r.Keep newest received of each
// scope (through traces_received), at most r.Limit in all.
func (s *Store) PruneTraces(ctx context.Context, r store.TraceRetention) (int, error) {
	now := time.Now()
	before, after := formatTime(now.Add(-store.DashboardKeep)), formatTime(now.Add(store.MaxClockSkew))
	for _, table := range storeutil.DashTables {
		if _, err := s.w.ExecContext(ctx, storeutil.DashPruneSQL(table), before, after); err != nil {
			return 0, wrap("prune "+table, err)
		}
	}
	return storeutil.PruneTraces(ctx, r, storeutil.Pruner{ByAge: s.pruneByAge, ScopesOver: s.scopesOver, TrimScope: s.trimScope})
}

func (s *Store) pruneByAge(ctx context.Context, before time.Time, limit int) (int, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM traces WHERE rowid IN
		(SELECT rowid FROM traces WHERE started_at < $1 LIMIT $2)`, formatTime(before), limit)
	n, err := affected(res, err)
	return n, wrap("prune traces by age", err)
}

// scopesOver lists the scopes holding more than keep traces.
func (s *Store) scopesOver(ctx context.Context, keep int) ([]store.Scope, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT org, project FROM traces
		GROUP BY org, project HAVING count(*) > $1`, keep)
	if err != nil {
		return nil, wrap("prune traces: scopes", err)
	}
	defer rows.Close()
	var out []store.Scope
	for rows.Next() {
		var sc store.Scope
		if err := rows.Scan(&sc.Org, &sc.Project); err != nil {
			return nil, wrap("prune traces: scopes", err)
		}
		out = append(out, sc)
	}
	return out, wrap("prune traces: scopes", rows.Err())
}

// trimScope deletes up to limit traces of sc past its keep newest: those
// after the keep-th newest in (received_at, id) order.
func (s *Store) trimScope(ctx context.Context, sc store.Scope, keep, limit int) (int, error) {
	var received, id string
	err := s.w.QueryRowContext(ctx, `SELECT received_at, id FROM traces WHERE org = $1 AND project = $2
		ORDER BY received_at DESC, id DESC LIMIT 1 OFFSET $3`, sc.Org, sc.Project, keep-1).Scan(&received, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil // keep or fewer
	}
	if err != nil {
		return 0, wrap("prune traces of "+sc.Org+"/"+sc.Project, err)
	}
	res, err := s.w.ExecContext(ctx, `DELETE FROM traces WHERE rowid IN
		(SELECT rowid FROM traces WHERE org = $1 AND project = $2
			AND (received_at < $3 OR (received_at = $3 AND id < $4)) LIMIT $5)`,
		sc.Org, sc.Project, received, id, limit)
	n, err := affected(res, err)
	return n, wrap("prune traces of "+sc.Org+"/"+sc.Project, err)
}

func affected(res sql.Result, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
