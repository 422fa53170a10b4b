package storeutil

import (
	"slices"
	"strings"
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

// DashSQL are the dashboard's reads. For one tenant each is a range of the
// rollups' (org, project, minute) key, for all tenants of their minute
// index, so their cost follows the span shown, not the traces kept.
type DashSQL struct{ Minutes, Latency, Errors, Tools, Capabilities string }

// DashQueries are the reads of scope (store.AllTenants: every tenant's,
// summed); DashArgs gives their arguments.
func DashQueries(scope store.Scope) DashSQL {
	q := DashSQL{
		Minutes: `SELECT minute, executions, errors FROM dash_minutes
			WHERE org = $1 AND project = $2 AND minute >= $3 ORDER BY minute`,
		Latency: `SELECT minute, bucket, n FROM dash_latency WHERE org = $1 AND project = $2 AND minute >= $3`,
		Errors:  `SELECT code, CAST(sum(n) AS BIGINT) FROM dash_errors WHERE org = $1 AND project = $2 AND minute >= $3 GROUP BY code`,
		Tools: `SELECT tool, CAST(sum(calls) AS BIGINT), CAST(sum(errors) AS BIGINT), sum(total_ms), max(max_ms) FROM dash_tools
			WHERE org = $1 AND project = $2 AND minute >= $3 GROUP BY tool`,
		// The most called capabilities, every version of a name together.
		Capabilities: `SELECT org, project, namespace, action, CAST(sum(uses) AS BIGINT) FROM capabilities
			WHERE org = $1 AND project = $2 AND uses > 0 GROUP BY org, project, namespace, action ORDER BY 5 DESC, 1, 2, 3, 4 LIMIT 10`,
	}
	if scope != store.AllTenants {
		return q
	}
	// Every tenant: the same reads without the tenant, minutes and latency
	// summed over the tenants that share them.
	all := func(sql string) string {
		sql = strings.ReplaceAll(sql, "org = $1 AND project = $2 AND minute >= $3", "minute >= $1")
		return strings.ReplaceAll(sql, "org = $1 AND project = $2 AND ", "")
	}
	q.Minutes = `SELECT minute, CAST(sum(executions) AS BIGINT), CAST(sum(errors) AS BIGINT) FROM dash_minutes
			WHERE minute >= $1 GROUP BY minute ORDER BY minute`
	q.Latency = `SELECT minute, bucket, CAST(sum(n) AS BIGINT) FROM dash_latency WHERE minute >= $1 GROUP BY minute, bucket`
	q.Errors, q.Tools, q.Capabilities = all(q.Errors), all(q.Tools), all(q.Capabilities)
	return q
}

// DashArgs are the arguments of DashQueries(scope)'s rollup reads (since
// is the backend's time value); the capabilities read takes DashScopeArgs.
func DashArgs(scope store.Scope, since any) []any {
	return append(DashScopeArgs(scope), since)
}

// DashScopeArgs are the arguments naming scope.
func DashScopeArgs(scope store.Scope) []any {
	if scope == store.AllTenants {
		return nil
	}
	return []any{scope.Org, scope.Project}
}

// CapabilityName names a capability in the dashboard: with its tenant when
// the view covers every tenant.
func CapabilityName(scope store.Scope, org, project, ns, action string) string {
	if scope == store.AllTenants {
		return org + "/" + project + " " + ns + ":" + action
	}
	return ns + ":" + action
}

// DashPruneSQL deletes one rollup table's rows before $1.
func DashPruneSQL(table string) string { return `DELETE FROM ` + table + ` WHERE minute < $1` }

// DashTables are the rollup tables.
var DashTables = []string{"dash_minutes", "dash_latency", "dash_errors", "dash_tools"}

// AddLatency files n executions of bucket into the minute at m in rows
// (ascending, as DashQueries' Minutes reads them).
func AddLatency(rows []store.DashboardMinute, m time.Time, bucket int, n int64) {
	if bucket < 0 || bucket > len(store.LatencyBounds) {
		return
	}
	i, ok := slices.BinarySearchFunc(rows, m, func(r store.DashboardMinute, m time.Time) int { return r.Minute.Compare(m) })
	if ok {
		rows[i].Latency[bucket] += n
	}
}
