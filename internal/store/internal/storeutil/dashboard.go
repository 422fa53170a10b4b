package storeutil

import (
	"slices"
	"time"

	"github.com/pml-go/pml/internal/store"
)

// Stmt is one SQL statement with its arguments ($N placeholders, which
// both backends take).
type Stmt struct {
	SQL  string
	Args []any
}

// Rollup is what a newly stored trace adds to the dashboard's rollup tables
// (docs/dashboard.md): its minute's execution and error count and latency
// bucket (a top-level trace only: a capability's nested run is part of its
// caller's execution), its error code, and its tools' calls. minute is the
// backend's value of the trace's minute; greatest the backend's name of the
// two-argument maximum.
func Rollup(t store.Trace, minute any, greatest string) []Stmt {
	st := t.Stats
	if st == nil {
		return nil
	}
	org, project := t.Scope.Org, t.Scope.Project
	var out []Stmt
	if t.ParentID == "" {
		errs := 0
		if !t.Success {
			errs = 1
		}
		out = append(out,
			Stmt{`INSERT INTO dash_minutes (org, project, minute, executions, errors) VALUES ($1, $2, $3, 1, $4)
				ON CONFLICT (org, project, minute) DO UPDATE SET executions = dash_minutes.executions + 1,
				errors = dash_minutes.errors + excluded.errors`, []any{org, project, minute, errs}},
			Stmt{`INSERT INTO dash_latency (org, project, minute, bucket, n) VALUES ($1, $2, $3, $4, 1)
				ON CONFLICT (org, project, minute, bucket) DO UPDATE SET n = dash_latency.n + 1`,
				[]any{org, project, minute, store.LatencyBucket(st.DurationMS)}})
		if st.ErrorCode != "" {
			out = append(out, Stmt{`INSERT INTO dash_errors (org, project, minute, code, n) VALUES ($1, $2, $3, $4, 1)
				ON CONFLICT (org, project, minute, code) DO UPDATE SET n = dash_errors.n + 1`,
				[]any{org, project, minute, st.ErrorCode}})
		}
	}
	for _, ts := range st.Tools {
		out = append(out, Stmt{`INSERT INTO dash_tools (org, project, minute, tool, calls, errors, total_ms, max_ms)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (org, project, minute, tool) DO UPDATE SET calls = dash_tools.calls + excluded.calls,
			errors = dash_tools.errors + excluded.errors, total_ms = dash_tools.total_ms + excluded.total_ms,
			max_ms = ` + greatest + `(dash_tools.max_ms, excluded.max_ms)`,
			[]any{org, project, minute, ts.Tool, ts.Calls, ts.Errors, ts.TotalMS, ts.MaxMS}})
	}
	return out
}

// Minute is the start of t's minute, in UTC: the rollups' time key.
func Minute(t time.Time) time.Time { return t.UTC().Truncate(time.Minute) }

// The dashboard's reads: every one a range of the (org, project, minute)
// primary key, so their cost follows the span shown, not the traces kept.
const (
	DashMinutesSQL = `SELECT minute, executions, errors FROM dash_minutes
		WHERE org = $1 AND project = $2 AND minute >= $3 ORDER BY minute`
	DashLatencySQL = `SELECT minute, bucket, n FROM dash_latency
		WHERE org = $1 AND project = $2 AND minute >= $3`
	DashErrorsSQL = `SELECT code, CAST(sum(n) AS BIGINT) FROM dash_errors
		WHERE org = $1 AND project = $2 AND minute >= $3 GROUP BY code`
	DashToolsSQL = `SELECT tool, CAST(sum(calls) AS BIGINT), CAST(sum(errors) AS BIGINT), sum(total_ms), max(max_ms) FROM dash_tools
		WHERE org = $1 AND project = $2 AND minute >= $3 GROUP BY tool`
)

// DashCapabilitiesSQL lists the scope's most called capabilities, every
// version of a name together.
const DashCapabilitiesSQL = `SELECT namespace, action, CAST(sum(uses) AS BIGINT) FROM capabilities
	WHERE org = $1 AND project = $2 AND uses > 0 GROUP BY namespace, action ORDER BY 3 DESC, 1, 2 LIMIT 10`

// DashPruneSQL deletes one rollup table's rows before $1.
func DashPruneSQL(table string) string { return `DELETE FROM ` + table + ` WHERE minute < $1` }

// DashTables are the rollup tables.
var DashTables = []string{"dash_minutes", "dash_latency", "dash_errors", "dash_tools"}

// AddLatency files n executions of bucket into the minute at m in rows
// (ascending, as DashMinutesSQL reads them).
func AddLatency(rows []store.DashboardMinute, m time.Time, bucket int, n int64) {
	if bucket < 0 || bucket > len(store.LatencyBounds) {
		return
	}
	i, ok := slices.BinarySearchFunc(rows, m, func(r store.DashboardMinute, m time.Time) int { return r.Minute.Compare(m) })
	if ok {
		rows[i].Latency[bucket] += n
	}
}
