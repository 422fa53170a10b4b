package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

const traceColumns = `id, parent_id, org, project, workflow_id, capability_fqdn, tools, success, started_at, body, caller`

const insertTrace = `INSERT INTO traces (` + traceColumns + `, received_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
	ON CONFLICT (org, project, id) DO NOTHING`

// PutTraces stores a batch in one transaction; a trace whose ID its scope
// already has is ignored, so re-sending a batch is harmless.
func (s *Store) PutTraces(ctx context.Context, traces []store.Trace) (fresh []bool, err error) {
	traces, err = storeutil.NewTraces(traces)
	if err != nil {
		return nil, wrap("put traces", err)
	}
	if len(traces) == 0 {
		return nil, nil
	}
	// The batch's statements run without ctx's cancellation, which is
	// checked between them instead: given a context that can end, the
	// driver watches it from a goroutine of its own for every statement
	// (one per trace stored) and database/sql for every transaction
	// (docs/performance.md "JSON without reflection"). Each statement is short;
	// a wait for the write lock is bounded by the busy timeout.
	quiet := context.WithoutCancel(ctx)
	if err := ctx.Err(); err != nil {
		return nil, wrap("put traces", err)
	}
	tx, err := s.w.BeginTx(quiet, nil)
	if err != nil {
		return nil, wrap("put traces: begin", err)
	}
	defer rollbackUnlessCommitted(tx, &err)
	stmt, err := s.txStmt(quiet, tx, insertTrace)
	if err != nil {
		return nil, wrap("put traces: prepare", err)
	}
	fresh = make([]bool, len(traces))
	var rollups storeutil.Rollups
	for i, t := range traces {
		if err := ctx.Err(); err != nil {
			return nil, wrap("put traces", err)
		}
		tools, err := encodeStrings(t.Tools)
		if err != nil {
			return nil, wrap("put traces", err)
		}
		res, err := stmt.ExecContext(quiet, t.ID, t.ParentID, t.Scope.Org, t.Scope.Project, t.WorkflowID,
			t.CapabilityFQDN, tools, t.Success, formatTime(t.StartedAt), nullJSON(t.Body), t.Caller, formatTime(t.ReceivedAt))
		if n, err := affected(res, err); err != nil || n == 0 {
			if err != nil {
				return nil, wrap("put trace "+t.ID, err)
			}
			continue // stored before: its rollups are counted
		}
		fresh[i] = true
		rollups.Add(t)
	}
	err = rollups.FoldTools(quiet, func(ctx context.Context, org, project string, hour time.Time) ([]string, error) {
		st, err := s.txStmt(ctx, tx, storeutil.HourToolsSQL)
		if err != nil {
			return nil, err
		}
		rows, err := st.QueryContext(ctx, org, project, formatTime(hour))
		if err != nil {
			return nil, err
		}
		return collectStrings(rows)
	})
	if err != nil {
		return nil, wrap("put traces: dashboard tools", err)
	}
	for _, r := range rollups.Stmts(func(m time.Time) any { return formatTime(m) }, "max") {
		st, err := s.txStmt(quiet, tx, r.SQL)
		if err != nil {
			return nil, wrap("put traces: dashboard rollup", err)
		}
		if _, err := st.ExecContext(quiet, r.Args...); err != nil {
			return nil, wrap("put traces: dashboard rollup", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, wrap("put traces", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, wrap("put traces: commit", err)
	}
	return fresh, nil
}

// TraceByID finds a trace of scope; another scope's trace is not found.
func (s *Store) TraceByID(ctx context.Context, scope store.Scope, id string) (store.Trace, error) {
	row := s.r.QueryRowContext(ctx, `SELECT `+traceColumns+` FROM traces
		WHERE org = $1 AND project = $2 AND id = $3`, scope.Org, scope.Project, id)
	t, err := scanTrace(row)
	return t, wrap("trace by id "+id, err)
}

// ListTraces lists the traces of f.Scope matching every non-zero filter,
// newest first, with the total before pagination. Since is inclusive, Until
// exclusive.
func (s *Store) ListTraces(ctx context.Context, f store.TraceFilter) ([]store.Trace, int, error) {
	where, args := storeutil.TraceWhere(f, traceDialect)
	var total int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM traces WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, wrap("count traces", err)
	}
	limit, offset := storeutil.Page(f.Limit, f.Offset)
	if limit == 0 {
		limit = -1 // SQLite: no limit
	}
	args = append(args, limit, offset)
	rows, err := s.r.QueryContext(ctx, fmt.Sprintf(`SELECT %s FROM traces WHERE %s
		ORDER BY started_at DESC, id DESC LIMIT $%d OFFSET $%d`,
		traceColumns, where, len(args)-1, len(args)), args...)
	if err != nil {
		return nil, 0, wrap("list traces", err)
	}
	out, err := collectTraces(rows)
	if err != nil {
		return nil, 0, wrap("list traces", err)
	}
	return out, total, nil
}

var traceDialect = storeutil.Dialect{
	ToolCond: "EXISTS (SELECT 1 FROM json_each(traces.tools) WHERE json_each.value = $%d)",
	TimeArg:  func(t time.Time) any { return formatTime(t) },
}

// ChildTraces lists the traces of scope whose parent is parentID, oldest first.
func (s *Store) ChildTraces(ctx context.Context, scope store.Scope, parentID string) ([]store.Trace, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+traceColumns+` FROM traces
		WHERE org = $1 AND project = $2 AND parent_id = $3 AND parent_id <> ''
		ORDER BY started_at, id`, scope.Org, scope.Project, parentID)
	if err != nil {
		return nil, wrap("child traces", err)
	}
	out, err := collectTraces(rows)
	return out, wrap("child traces", err)
}

func collectStrings(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func collectTraces(rows *sql.Rows) ([]store.Trace, error) {
	defer rows.Close()
	out := []store.Trace{}
	for rows.Next() {
		t, err := scanTrace(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func scanTrace(row scanner) (store.Trace, error) {
	var (
		t       store.Trace
		tools   string
		started string
		body    sql.NullString
	)
	err := row.Scan(&t.ID, &t.ParentID, &t.Scope.Org, &t.Scope.Project, &t.WorkflowID,
		&t.CapabilityFQDN, &tools, &t.Success, &started, &body, &t.Caller)
	if err != nil {
		return store.Trace{}, err
	}
	t.Body = rawJSON(body)
	if t.Tools, err = decodeStrings(tools); err != nil {
		return store.Trace{}, err
	}
	if t.StartedAt, err = parseTime(started); err != nil {
		return store.Trace{}, err
	}
	return t, nil
}

// Dashboard reads scope's rollups since since (store.Store).
func (s *Store) Dashboard(ctx context.Context, sc store.Scope, since time.Time) (store.DashboardRows, error) {
	out := store.DashboardRows{Errors: map[string]int64{}}
	since = storeutil.Minute(since)
	q, args := storeutil.DashQueries(sc), storeutil.DashArgs(sc, formatTime(since))
	split := storeutil.DashSplitArgs(sc, formatTime(since), formatTime(storeutil.FirstHour(since)))
	rows, err := s.r.QueryContext(ctx, q.Minutes, args...)
	if err != nil {
		return out, wrap("dashboard minutes", err)
	}
	for rows.Next() {
		var m store.DashboardMinute
		var minute string
		if err := rows.Scan(&minute, &m.Executions, &m.Errors); err != nil {
			rows.Close()
			return out, wrap("dashboard minutes", err)
		}
		if m.Minute, err = parseTime(minute); err != nil {
			rows.Close()
			return out, wrap("dashboard minutes", err)
		}
		out.Minutes = append(out.Minutes, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, wrap("dashboard minutes", err)
	}
	rows, err = s.r.QueryContext(ctx, q.Latency, args...)
	if err != nil {
		return out, wrap("dashboard latency", err)
	}
	for rows.Next() {
		var minute string
		var bucket int
		var n int64
		var maxMS float64
		if err := rows.Scan(&minute, &bucket, &n, &maxMS); err != nil {
			rows.Close()
			return out, wrap("dashboard latency", err)
		}
		m, err := parseTime(minute)
		if err != nil {
			rows.Close()
			return out, wrap("dashboard latency", err)
		}
		storeutil.AddLatency(out.Minutes, m, bucket, n, maxMS)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, wrap("dashboard latency", err)
	}
	rows, err = s.r.QueryContext(ctx, q.Errors, split...)
	if err != nil {
		return out, wrap("dashboard errors", err)
	}
	for rows.Next() {
		var code string
		var n int64
		if err := rows.Scan(&code, &n); err != nil {
			rows.Close()
			return out, wrap("dashboard errors", err)
		}
		out.Errors[code] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, wrap("dashboard errors", err)
	}
	rows, err = s.r.QueryContext(ctx, q.Tools, split...)
	if err != nil {
		return out, wrap("dashboard tools", err)
	}
	for rows.Next() {
		var ts store.ToolStat
		if err := rows.Scan(&ts.Tool, &ts.Calls, &ts.Errors, &ts.TotalMS, &ts.MaxMS); err != nil {
			rows.Close()
			return out, wrap("dashboard tools", err)
		}
		out.Tools = append(out.Tools, ts)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, wrap("dashboard tools", err)
	}
	rows, err = s.r.QueryContext(ctx, q.Capabilities, storeutil.DashScopeArgs(sc)...)
	if err != nil {
		return out, wrap("dashboard capabilities", err)
	}
	defer rows.Close()
	for rows.Next() {
		var org, project, ns, action string
		var uses int64
		if err := rows.Scan(&org, &project, &ns, &action, &uses); err != nil {
			return out, wrap("dashboard capabilities", err)
		}
		out.Capabilities = append(out.Capabilities, store.CapabilityUses{Name: storeutil.CapabilityName(sc, org, project, ns, action), Uses: uses})
	}
	return out, wrap("dashboard capabilities", rows.Err())
}
