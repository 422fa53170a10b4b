package sqlite

import (
	"context"
	"time"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// AddSeenDiscover records a discover of scope and keeps its most recent.
func (s *Store) AddSeenDiscover(ctx context.Context, sc store.Scope, d store.SeenDiscover) (err error) {
	if err := storeutil.CheckSeenDiscover(d); err != nil {
		return wrap("add seen discover", err)
	}
	shown, err := encodeStrings(d.Shown)
	if err != nil {
		return wrap("add seen discover", err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return wrap("add seen discover: begin", err)
	}
	defer rollbackUnlessCommitted(tx, &err)
	if _, err := tx.ExecContext(ctx, `INSERT INTO seen_discovers (org, project, caller, family, shown, seen_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, sc.Org, sc.Project, d.Caller, d.Family, shown, formatTime(d.At)); err != nil {
		return wrap("add seen discover", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM seen_discovers WHERE id IN (
			SELECT id FROM seen_discovers WHERE org = $1 AND project = $2
			ORDER BY seen_at DESC, id DESC LIMIT -1 OFFSET $3)`, sc.Org, sc.Project, store.MaxSeenDiscovers); err != nil {
		return wrap("add seen discover: keep the newest", err)
	}
	return wrap("add seen discover: commit", tx.Commit())
}

// anySeenSQL says whether TakeSeenDiscovers would find anything.
const anySeenSQL = `SELECT EXISTS (SELECT 1 FROM seen_discovers WHERE org = $1 AND project = $2 AND caller = $3 AND seen_at >= $4)`

// TakeSeenDiscovers returns and deletes scope's discovers of caller since.
// The learner takes after every run, and most callers have nothing to
// take: a reader answers that, and the writer, which the traces' commits
// wait for, deletes only what is there. A discover added after the check
// is taken by the caller's next run, as if this run had ended a little
// earlier.
func (s *Store) TakeSeenDiscovers(ctx context.Context, sc store.Scope, caller string, since time.Time) ([]store.SeenDiscover, error) {
	var found bool
	if err := s.anySeen.QueryRowContext(ctx, sc.Org, sc.Project, caller, formatTime(since)).Scan(&found); err != nil {
		return nil, wrap("take seen discovers", err)
	}
	if !found {
		return []store.SeenDiscover{}, nil
	}
	rows, err := s.w.QueryContext(ctx, `DELETE FROM seen_discovers WHERE org = $1 AND project = $2 AND caller = $3 AND seen_at >= $4
		RETURNING family, shown, seen_at`, sc.Org, sc.Project, caller, formatTime(since))
	if err != nil {
		return nil, wrap("take seen discovers", err)
	}
	defer rows.Close()
	out := []store.SeenDiscover{}
	for rows.Next() {
		d := store.SeenDiscover{Caller: caller}
		var shown, at string
		if err := rows.Scan(&d.Family, &shown, &at); err != nil {
			return nil, wrap("take seen discovers", err)
		}
		if d.Shown, err = decodeStrings(shown); err != nil {
			return nil, wrap("take seen discovers", err)
		}
		if d.At, err = parseTime(at); err != nil {
			return nil, wrap("take seen discovers", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("take seen discovers", err)
	}
	storeutil.SortSeenDiscovers(out)
	return out, nil
}

// PutToolRelevance upserts scope's rows and keeps its most recently updated.
func (s *Store) PutToolRelevance(ctx context.Context, sc store.Scope, rows []store.ToolRelevance) (err error) {
	if err := storeutil.CheckToolRelevance(rows); err != nil {
		return wrap("put tool relevance", err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return wrap("put tool relevance: begin", err)
	}
	defer rollbackUnlessCommitted(tx, &err)
	// Prepared once for the batch, as AddToolWords: parsing them per row
	// cost more than running them.
	del, err := tx.PrepareContext(ctx, `DELETE FROM tool_relevance WHERE org = $1 AND project = $2 AND family = $3 AND tool_id = $4`)
	if err != nil {
		return wrap("put tool relevance: prepare", err)
	}
	defer del.Close()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO tool_relevance (org, project, family, tool_id, gain, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (org, project, family, tool_id) DO UPDATE SET gain = excluded.gain, updated_at = excluded.updated_at`)
	if err != nil {
		return wrap("put tool relevance: prepare", err)
	}
	defer ins.Close()
	for _, r := range rows {
		if r.Gain <= 0 {
			if _, err := del.ExecContext(ctx, sc.Org, sc.Project, r.Family, r.Tool); err != nil {
				return wrap("put tool relevance", err)
			}
			continue
		}
		if _, err := ins.ExecContext(ctx, sc.Org, sc.Project, r.Family, r.Tool, r.Gain, formatTime(r.UpdatedAt)); err != nil {
			return wrap("put tool relevance", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM tool_relevance WHERE org = $1 AND project = $2 AND (family, tool_id) IN (
			SELECT family, tool_id FROM tool_relevance WHERE org = $1 AND project = $2
			ORDER BY updated_at DESC, family, tool_id LIMIT -1 OFFSET $3)`,
		sc.Org, sc.Project, store.MaxToolRelevance); err != nil {
		return wrap("put tool relevance: keep the newest", err)
	}
	return wrap("put tool relevance: commit", tx.Commit())
}

// ToolRelevance returns scope's rows, by family and tool.
func (s *Store) ToolRelevance(ctx context.Context, sc store.Scope) ([]store.ToolRelevance, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT family, tool_id, gain, updated_at FROM tool_relevance
		WHERE org = $1 AND project = $2 ORDER BY family, tool_id LIMIT $3`, sc.Org, sc.Project, store.MaxToolRelevance)
	if err != nil {
		return nil, wrap("tool relevance", err)
	}
	defer rows.Close()
	out := []store.ToolRelevance{}
	for rows.Next() {
		var r store.ToolRelevance
		var at string
		if err := rows.Scan(&r.Family, &r.Tool, &r.Gain, &at); err != nil {
			return nil, wrap("tool relevance", err)
		}
		if r.UpdatedAt, err = parseTime(at); err != nil {
			return nil, wrap("tool relevance", err)
		}
		out = append(out, r)
	}
	return out, wrap("tool relevance", rows.Err())
}
