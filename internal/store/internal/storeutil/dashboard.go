package storeutil

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
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
			// A code outside the wire contract's is one row, whatever
			// the trace says (docs/limits.md "What a posted trace may say").
			r.errors[with(k, string(pmlerr.Code(st.ErrorCode).Bounded()))]++
		}
	}
	for _, ts := range st.Tools {
		r.addTool(k, ts.Tool, ts)
	}
}

// addTool adds ts's figures to tool's row under k.
func (r *Rollups) addTool(k dashKey, tool string, ts store.ToolStat) {
	tk := with(k, tool)
	sum := r.tools[tk]
	if sum == nil {
		sum = &store.ToolStat{Tool: tool}
		r.tools[tk] = sum
	}
	sum.Calls += ts.Calls
	sum.Errors += ts.Errors
	sum.TotalMS += ts.TotalMS
	sum.MaxMS = max(sum.MaxMS, ts.MaxMS)
}

func with(k dashKey, sub string) dashKey { k.sub = sub; return k }

// ToolsOfHour lists the tools a tenant's hour already has in the hourly
// rollup (dash_tools_hour), within the transaction storing a batch.
type ToolsOfHour func(ctx context.Context, org, project string, hour time.Time) ([]string, error)

// FoldTools bounds the tools a tenant's hour holds in the rollups to
// store.MaxDashToolsPerHour: a tool the hour does not have yet gets a row
// of its own while the hour has fewer than that less one (the batch's most
// called first), and is counted under store.OtherTools after that. The
// minute rows follow the hour's, so both tables stay bounded per tenant
// and time, whatever names traces carry. Call it once, before Stmts.
func (r *Rollups) FoldTools(ctx context.Context, have ToolsOfHour) error {
	type hourKey struct {
		org, project string
		hour         time.Time
	}
	groups := map[hourKey][]dashKey{}
	for k := range r.tools {
		h := hourKey{k.org, k.project, Hour(k.minute)}
		groups[h] = append(groups[h], k)
	}
	for _, h := range slices.SortedFunc(maps.Keys(groups), func(a, b hourKey) int {
		return cmp.Or(strings.Compare(a.org, b.org), strings.Compare(a.project, b.project), a.hour.Compare(b.hour))
	}) {
		existing, err := have(ctx, h.org, h.project, h.hour)
		if err != nil {
			return err
		}
		names := map[string]bool{}
		for _, n := range existing {
			names[n] = true
		}
		delete(names, store.OtherTools)
		calls := map[string]int64{}
		keysOf := map[string][]dashKey{}
		for _, k := range groups[h] {
			calls[k.sub] += r.tools[k].Calls
			keysOf[k.sub] = append(keysOf[k.sub], k)
		}
		fresh := slices.Collect(maps.Keys(calls))
		slices.SortFunc(fresh, func(a, b string) int { return cmp.Or(cmp.Compare(calls[b], calls[a]), strings.Compare(a, b)) })
		for _, tool := range fresh {
			if tool == store.OtherTools || names[tool] {
				continue
			}
			if len(names) < store.MaxDashToolsPerHour-1 {
				names[tool] = true
				continue
			}
			for _, k := range keysOf[tool] {
				r.foldTool(k)
			}
		}
	}
	return nil
}

// foldTool moves k's sums to its minute's OtherTools row.
func (r *Rollups) foldTool(k dashKey) {
	ts := r.tools[k]
	delete(r.tools, k)
	r.addTool(k, store.OtherTools, *ts)
}

// RollupSQL are the rollup upserts, one SQL text per table (dash_minutes,
// dash_latency, dash_errors, dash_tools, dash_errors_hour,
// dash_tools_hour), so that a backend can prepare them once. greatest is
// the backend's two-argument maximum.
func RollupSQL(greatest string) []string {
	hourly := func(sql string) string {
		sql = strings.ReplaceAll(sql, "dash_errors", "dash_errors_hour")
		return strings.ReplaceAll(sql, "dash_tools", "dash_tools_hour")
	}
	minutes := rollupSQL(greatest)
	return append(minutes, hourly(minutes[2]), hourly(minutes[3]))
}

func rollupSQL(greatest string) []string {
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
	// The same errors and tools by hour.
	errorsHour := map[dashKey]int64{}
	for k, n := range r.errors {
		k.minute = Hour(k.minute)
		errorsHour[k] += n
	}
	for _, k := range sortedKeys(errorsHour) {
		out = append(out, Stmt{sql[4], []any{k.org, k.project, minute(k.minute), k.sub, errorsHour[k]}})
	}
	toolsHour := map[dashKey]*store.ToolStat{}
	for k, ts := range r.tools {
		k.minute = Hour(k.minute)
		sum := toolsHour[k]
		if sum == nil {
			sum = &store.ToolStat{Tool: ts.Tool}
			toolsHour[k] = sum
		}
		sum.Calls += ts.Calls
		sum.Errors += ts.Errors
		sum.TotalMS += ts.TotalMS
		sum.MaxMS = max(sum.MaxMS, ts.MaxMS)
	}
	for _, k := range sortedKeys(toolsHour) {
		ts := toolsHour[k]
		out = append(out, Stmt{sql[5], []any{k.org, k.project, minute(k.minute), ts.Tool, ts.Calls, ts.Errors, ts.TotalMS, ts.MaxMS}})
	}
	return out
}

// Hour is the start of t's hour, in UTC: the hourly rollups' time key.
func Hour(t time.Time) time.Time { return t.UTC().Truncate(time.Hour) }

// HourToolsSQL lists a tenant's tools in one hour of dash_tools_hour
// (ToolsOfHour).
const HourToolsSQL = `SELECT tool FROM dash_tools_hour WHERE org = $1 AND project = $2 AND minute = $3`

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
// index, so their cost follows the span shown, not the traces kept. Errors
// and Tools read whole hours from the hourly tables and the minutes before
// the first whole hour from the minute tables (their arguments are
// DashSplitArgs), so they read at most a bounded number of rows per hour.
type DashSQL struct{ Minutes, Latency, Errors, Tools, Capabilities string }

// DashQueries are the reads of scope (store.AllTenants: every tenant's,
// summed); DashArgs gives their arguments.
func DashQueries(scope store.Scope) DashSQL {
	q := DashSQL{
		Minutes: `SELECT minute, executions, errors FROM dash_minutes
			WHERE org = $1 AND project = $2 AND minute >= $3 ORDER BY minute`,
		Latency: `SELECT minute, bucket, n, max_ms FROM dash_latency WHERE org = $1 AND project = $2 AND minute >= $3`,
		Errors: `SELECT code, CAST(sum(n) AS BIGINT) FROM (
			SELECT code, n FROM dash_errors WHERE org = $1 AND project = $2 AND minute >= $3 AND minute < $4
			UNION ALL SELECT code, n FROM dash_errors_hour WHERE org = $1 AND project = $2 AND minute >= $4) e GROUP BY code`,
		Tools: `SELECT tool, CAST(sum(calls) AS BIGINT), CAST(sum(errors) AS BIGINT), sum(total_ms), max(max_ms) FROM (
			SELECT tool, calls, errors, total_ms, max_ms FROM dash_tools WHERE org = $1 AND project = $2 AND minute >= $3 AND minute < $4
			UNION ALL SELECT tool, calls, errors, total_ms, max_ms FROM dash_tools_hour WHERE org = $1 AND project = $2 AND minute >= $4) t
			GROUP BY tool`,
		// The most used capabilities, every version of a name together:
		// the times each ran, learned runs plus calls (Capability.TimesRun).
		Capabilities: `SELECT org, project, namespace, action, CAST(sum(usage_count + uses) AS BIGINT) FROM capabilities
			WHERE org = $1 AND project = $2 AND usage_count + uses > 0 GROUP BY org, project, namespace, action ORDER BY 5 DESC, 1, 2, 3, 4 LIMIT 10`,
	}
	if scope != store.AllTenants {
		return q
	}
	// Every tenant: the same reads without the tenant, minutes and latency
	// summed over the tenants that share them.
	all := func(sql string) string {
		sql = strings.ReplaceAll(sql, "org = $1 AND project = $2 AND minute >= $3 AND minute < $4", "minute >= $1 AND minute < $2")
		sql = strings.ReplaceAll(sql, "org = $1 AND project = $2 AND minute >= $4", "minute >= $2")
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

// DashSplitArgs are the arguments of DashQueries(scope)'s Errors and Tools:
// since, and the first whole hour at or after it (FirstHour), as the
// backend's time values.
func DashSplitArgs(scope store.Scope, since, firstHour any) []any {
	return append(DashScopeArgs(scope), since, firstHour)
}

// FirstHour is the first whole hour at or after since.
func FirstHour(since time.Time) time.Time {
	h := Hour(since)
	if h.Before(since) {
		h = h.Add(time.Hour)
	}
	return h
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

// DashPruneSQL deletes one rollup table's rows before $1 or after $2.
func DashPruneSQL(table string) string {
	return `DELETE FROM ` + table + ` WHERE minute < $1 OR minute > $2`
}

// DashTables are the rollup tables.
var DashTables = []string{"dash_minutes", "dash_latency", "dash_errors", "dash_tools", "dash_errors_hour", "dash_tools_hour"}

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
