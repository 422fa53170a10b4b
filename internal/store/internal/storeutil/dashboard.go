package storeutil

import (
	"cmp"
	"maps"
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

// Rollups sums what a batch of newly stored traces adds to the dashboard's
// rollup tables (docs/dashboard.md): per tenant and minute, its executions
// and errors and latency buckets (top-level traces only: a capability's
// nested run is part of its caller's execution), its error codes, and its
// tools' calls. Summing first makes a batch one upsert per row it touches,
// not one per trace, and Stmts orders them by key, so two writers upsert the
// same rows in the same order and cannot deadlock. The zero value is empty.
type Rollups struct {
	minutes map[dashKey]*[2]int64   // executions, errors
	latency map[dashKey]*latencySum // key.bucket: the latency bucket
	errors  map[dashKey]int64       // key.sub: the error code
	tools   map[dashKey]*store.ToolStat
}

// latencySum is one latency bucket's executions and the slowest of them.
type latencySum struct {
	n     int64
	maxMS float64
}

// dashKey is one rollup row: a tenant's minute, and the latency bucket,
// error code or tool within it.
type dashKey struct {
	org, project string
	minute       time.Time
	bucket       int
	sub          string
}

// Add counts the newly stored trace t; a trace without Stats adds nothing.
func (r *Rollups) Add(t store.Trace) {
	st := t.Stats
	if st == nil {
		return
	}
	if r.minutes == nil {
		r.minutes, r.latency = map[dashKey]*[2]int64{}, map[dashKey]*latencySum{}
		r.errors, r.tools = map[dashKey]int64{}, map[dashKey]*store.ToolStat{}
	}
	k := dashKey{org: t.Scope.Org, project: t.Scope.Project, minute: Minute(t.StartedAt)}
	if t.ParentID == "" {
		m := r.minutes[k]
		if m == nil {
			m = new([2]int64)
			r.minutes[k] = m
		}
		m[0]++
		if !t.Success {
			m[1]++
		}
		lk := k
		lk.bucket = store.LatencyBucket(st.DurationMS)
		l := r.latency[lk]
		if l == nil {
			l = &latencySum{}
			r.latency[lk] = l
		}
		l.n++
		l.maxMS = max(l.maxMS, st.DurationMS)
		if st.ErrorCode != "" {
			r.errors[with(k, st.ErrorCode)]++
		}
	}
	for _, ts := range st.Tools {
		tk := with(k, ts.Tool)
		sum := r.tools[tk]
		if sum == nil {
			sum = &store.ToolStat{Tool: ts.Tool}
			r.tools[tk] = sum
		}
		sum.Calls += ts.Calls
		sum.Errors += ts.Errors
		sum.TotalMS += ts.TotalMS
		sum.MaxMS = max(sum.MaxMS, ts.MaxMS)
	}
}

func with(k dashKey, sub string) dashKey { k.sub = sub; return k }

// RollupSQL are the rollup upserts, one SQL text per table (dash_minutes,
// dash_latency, dash_errors, dash_tools), so that a backend can prepare
// them once. greatest is the backend's two-argument maximum.
func RollupSQL(greatest string) []string {
	return []string{
		`INSERT INTO dash_minutes (org, project, minute, executions, errors) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (org, project, minute) DO UPDATE SET executions = dash_minutes.executions + excluded.executions,
			errors = dash_minutes.errors + excluded.errors`,
		`INSERT INTO dash_latency (org, project, minute, bucket, n, max_ms) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (org, project, minute, bucket) DO UPDATE SET n = dash_latency.n + excluded.n,
			max_ms = ` + greatest + `(dash_latency.max_ms, excluded.max_ms)`,
		`INSERT INTO dash_errors (org, project, minute, code, n) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (org, project, minute, code) DO UPDATE SET n = dash_errors.n + excluded.n`,
		`INSERT INTO dash_tools (org, project, minute, tool, calls, errors, total_ms, max_ms)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (org, project, minute, tool) DO UPDATE SET calls = dash_tools.calls + excluded.calls,
			errors = dash_tools.errors + excluded.errors, total_ms = dash_tools.total_ms + excluded.total_ms,
			max_ms = ` + greatest + `(dash_tools.max_ms, excluded.max_ms)`,
	}
}

// Stmts are the upserts of what was added, in key order; minute is the
// backend's value of a minute, greatest its two-argument maximum.
func (r *Rollups) Stmts(minute func(time.Time) any, greatest string) []Stmt {
	sql := RollupSQL(greatest)
	var out []Stmt
	for _, k := range sortedKeys(r.minutes) {
		m := r.minutes[k]
		out = append(out, Stmt{sql[0], []any{k.org, k.project, minute(k.minute), m[0], m[1]}})
	}
	for _, k := range sortedKeys(r.latency) {
		l := r.latency[k]
		out = append(out, Stmt{sql[1], []any{k.org, k.project, minute(k.minute), k.bucket, l.n, l.maxMS}})
	}
	for _, k := range sortedKeys(r.errors) {
		out = append(out, Stmt{sql[2], []any{k.org, k.project, minute(k.minute), k.sub, r.errors[k]}})
	}
	for _, k := range sortedKeys(r.tools) {
		ts := r.tools[k]
		out = append(out, Stmt{sql[3], []any{k.org, k.project, minute(k.minute), ts.Tool, ts.Calls, ts.Errors, ts.TotalMS, ts.MaxMS}})
	}
	return out
}

func sortedKeys[V any](m map[dashKey]V) []dashKey {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b dashKey) int {
		return cmp.Or(strings.Compare(a.org, b.org), strings.Compare(a.project, b.project),
			a.minute.Compare(b.minute), cmp.Compare(a.bucket, b.bucket), strings.Compare(a.sub, b.sub))
	})
	return keys
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
		Latency: `SELECT minute, bucket, n, max_ms FROM dash_latency WHERE org = $1 AND project = $2 AND minute >= $3`,
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
	q.Latency = `SELECT minute, bucket, CAST(sum(n) AS BIGINT), max(max_ms) FROM dash_latency WHERE minute >= $1 GROUP BY minute, bucket`
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

// AddLatency files n executions of bucket, the slowest taking maxMS, into
// the minute at m in rows (ascending, as DashQueries' Minutes reads them).
func AddLatency(rows []store.DashboardMinute, m time.Time, bucket int, n int64, maxMS float64) {
	if bucket < 0 || bucket > len(store.LatencyBounds) {
		return
	}
	i, ok := slices.BinarySearchFunc(rows, m, func(r store.DashboardMinute, m time.Time) int { return r.Minute.Compare(m) })
	if ok {
		rows[i].Latency[bucket] += n
		rows[i].LatencyMaxMS[bucket] = max(rows[i].LatencyMaxMS[bucket], maxMS)
	}
}
