package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

const traceColumns = `id, parent_id, org, project, workflow_id, capability_fqdn, tools, success, started_at, body, caller`

// PutTraces stores a batch in one transaction (one round trip); a trace
// whose ID its scope already has is ignored, so re-sending is harmless.
func (s *Store) PutTraces(ctx context.Context, traces []store.Trace) ([]bool, error) {
	traces, err := storeutil.NewTraces(traces)
	if err != nil {
		return nil, wrap(ctx, "put traces", err)
	}
	if len(traces) == 0 {
		return nil, nil
	}
	var fresh []bool
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		fresh = make([]bool, len(traces))
		var batch pgx.Batch
		for _, t := range traces {
			batch.Queue(`INSERT INTO traces (`+traceColumns+`, received_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
				ON CONFLICT (org, project, id) DO NOTHING`,
				t.ID, t.ParentID, t.Scope.Org, t.Scope.Project, t.WorkflowID, t.CapabilityFQDN,
				t.Tools, t.Success, t.StartedAt, nullJSON(t.Body), t.Caller, t.ReceivedAt)
		}
		// The rollups of the traces that are new: a re-sent one counts once.
		var rollups storeutil.Rollups
		res := tx.SendBatch(ctx, &batch)
		for i, t := range traces {
			tag, err := res.Exec()
			if err != nil {
				_ = res.Close()
				return err
			}
			if tag.RowsAffected() != 0 {
				fresh[i] = true
				rollups.Add(t)
			}
		}
		if err := res.Close(); err != nil {
			return err
		}
		err := rollups.FoldTools(ctx, func(ctx context.Context, org, project string, hour time.Time) ([]string, error) {
			rows, err := tx.Query(ctx, storeutil.HourToolsSQL, org, project, hour)
			if err != nil {
				return nil, err
			}
			return pgx.CollectRows(rows, pgx.RowTo[string])
		})
		if err != nil {
			return err
		}
		var upserts pgx.Batch
		for _, r := range rollups.Stmts(func(m time.Time) any { return m }, "GREATEST") {
			upserts.Queue(r.SQL, r.Args...)
		}
		if upserts.Len() == 0 {
			return nil
		}
		return tx.SendBatch(ctx, &upserts).Close()
	})
	if err != nil {
		return nil, wrap(ctx, "put traces", err)
	}
	return fresh, nil
}

// TraceByID finds a trace of scope; another scope's trace is not found.
func (s *Store) TraceByID(ctx context.Context, sc store.Scope, id string) (store.Trace, error) {
	row := s.pool.QueryRow(ctx, `SELECT `+traceColumns+` FROM traces
		WHERE org = $1 AND project = $2 AND id = $3`, sc.Org, sc.Project, id)
	t, err := scanTrace(row)
	return t, wrap(ctx, "trace by id "+id, err)
}

// ListTraces lists the traces of f.Scope matching every non-zero filter,
// newest first, with the total before pagination. Since is inclusive, Until
// exclusive.
func (s *Store) ListTraces(ctx context.Context, f store.TraceFilter) ([]store.Trace, int, error) {
	where, args := storeutil.TraceWhere(f, traceDialect)
	var total int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM traces WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, wrap(ctx, "count traces", err)
	}
	limit, offset := page(f.Limit, f.Offset)
	args = append(args, limit, offset)
	rows, err := s.pool.Query(ctx, fmt.Sprintf(`SELECT %s FROM traces WHERE %s
		ORDER BY started_at DESC, id DESC LIMIT $%d OFFSET $%d`,
		traceColumns, where, len(args)-1, len(args)), args...)
	if err != nil {
		return nil, 0, wrap(ctx, "list traces", err)
	}
	out, err := collectTraces(rows)
	if err != nil {
		return nil, 0, wrap(ctx, "list traces", err)
	}
	return out, total, nil
}

// @> with a one-element array is what the GIN index on tools serves.
var traceDialect = storeutil.Dialect{
	ToolCond: "tools @> jsonb_build_array($%d::text)",
	TimeArg:  func(t time.Time) any { return t },
}

// ChildTraces lists the traces of scope whose parent is parentID, oldest first.
func (s *Store) ChildTraces(ctx context.Context, sc store.Scope, parentID string) ([]store.Trace, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+traceColumns+` FROM traces
		WHERE org = $1 AND project = $2 AND parent_id = $3 AND parent_id <> ''
		ORDER BY started_at, id`, sc.Org, sc.Project, parentID)
	if err != nil {
		return nil, wrap(ctx, "child traces", err)
	}
	out, err := collectTraces(rows)
	return out, wrap(ctx, "child traces", err)
}

func collectTraces(rows pgx.Rows) ([]store.Trace, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Trace, error) { return scanTrace(r) })
}

func scanTrace(row scanner) (store.Trace, error) {
	var (
		t    store.Trace
		body []byte
	)
	err := row.Scan(&t.ID, &t.ParentID, &t.Scope.Org, &t.Scope.Project, &t.WorkflowID,
		&t.CapabilityFQDN, &t.Tools, &t.Success, &t.StartedAt, &body, &t.Caller)
	if err != nil {
		return store.Trace{}, err
	}
	t.Body = rawJSON(body)
	if t.Tools == nil {
		t.Tools = []string{}
	}
	t.StartedAt = t.StartedAt.UTC()
	return t, nil
}

// Dashboard reads scope's rollups since since (store.Store).
func (s *Store) Dashboard(ctx context.Context, sc store.Scope, since time.Time) (store.DashboardRows, error) {
	out := store.DashboardRows{Errors: map[string]int64{}}
	since = storeutil.Minute(since)
	q, args := storeutil.DashQueries(sc), storeutil.DashArgs(sc, since)
	split := storeutil.DashSplitArgs(sc, since, storeutil.FirstHour(since))
	rows, err := s.pool.Query(ctx, q.Minutes, args...)
	if err != nil {
		return out, wrap(ctx, "dashboard minutes", err)
	}
	out.Minutes, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.DashboardMinute, error) {
		var m store.DashboardMinute
		err := r.Scan(&m.Minute, &m.Executions, &m.Errors)
		m.Minute = m.Minute.UTC()
		return m, err
	})
	if err != nil {
		return out, wrap(ctx, "dashboard minutes", err)
	}
	rows, err = s.pool.Query(ctx, q.Latency, args...)
	if err != nil {
		return out, wrap(ctx, "dashboard latency", err)
	}
	var minute time.Time
	var bucket int
	var n int64
	var maxMS float64
	_, err = pgx.ForEachRow(rows, []any{&minute, &bucket, &n, &maxMS}, func() error {
		storeutil.AddLatency(out.Minutes, minute.UTC(), bucket, n, maxMS)
		return nil
	})
	if err != nil {
		return out, wrap(ctx, "dashboard latency", err)
	}
	rows, err = s.pool.Query(ctx, q.Errors, split...)
	if err != nil {
		return out, wrap(ctx, "dashboard errors", err)
	}
	var code string
	_, err = pgx.ForEachRow(rows, []any{&code, &n}, func() error {
		out.Errors[code] = n
		return nil
	})
	if err != nil {
		return out, wrap(ctx, "dashboard errors", err)
	}
	rows, err = s.pool.Query(ctx, q.Tools, split...)
	if err != nil {
		return out, wrap(ctx, "dashboard tools", err)
	}
	out.Tools, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.ToolStat, error) {
		var ts store.ToolStat
		err := r.Scan(&ts.Tool, &ts.Calls, &ts.Errors, &ts.TotalMS, &ts.MaxMS)
		return ts, err
	})
	if err != nil {
		return out, wrap(ctx, "dashboard tools", err)
	}
	rows, err = s.pool.Query(ctx, q.Capabilities, storeutil.DashScopeArgs(sc)...)
	if err != nil {
		return out, wrap(ctx, "dashboard capabilities", err)
	}
	out.Capabilities, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.CapabilityUses, error) {
		var org, project, ns, action string
		var c store.CapabilityUses
		err := r.Scan(&org, &project, &ns, &action, &c.Uses)
		c.Name = storeutil.CapabilityName(sc, org, project, ns, action)
		return c, err
	})
	return out, wrap(ctx, "dashboard capabilities", err)
}
