package gateway

import (
	"cmp"
	"net/http"
	"slices"
	"time"

	"github.com/pml-go/pml/internal/gateway/httpapi"
	"github.com/pml-go/pml/internal/store"
)

// dashboardRanges are the spans the dashboard shows and the width of one
// point of its series (docs/dashboard.md).
var dashboardRanges = map[string]struct{ span, step time.Duration }{
	"1h":  {time.Hour, time.Minute},
	"24h": {24 * time.Hour, 15 * time.Minute},
	"7d":  {7 * 24 * time.Hour, 2 * time.Hour},
}

// dashboardTop is how many error codes and tools each table lists; the
// rest are summed in one last row named dashboardOther (docs/dashboard.md).
const dashboardTop = 20

// dashboardOther names the row of a table's entries past dashboardTop.
const dashboardOther = "other"

// Dashboard is GET /api/dashboard's answer: one tenant's executions over a
// range, from the store's rollups, and its admission figures now.
type Dashboard struct {
	Range string `json:"range"`
	// AllTenants: an operator's view, every tenant summed.
	AllTenants   bool                   `json:"all_tenants,omitempty"`
	StepSeconds  int64                  `json:"step_seconds"`
	Series       []DashboardPoint       `json:"series"`
	Totals       DashboardTotals        `json:"totals"`
	ErrorsByCode []CodeCount            `json:"errors_by_code"`
	SlowestTools []DashboardTool        `json:"slowest_tools"`
	FailingTools []DashboardTool        `json:"failing_tools"`
	Capabilities []store.CapabilityUses `json:"capabilities"`
	Admission    DashboardAdmission     `json:"admission"`
}

// DashboardPoint is one step of the series; latencies are percentiles
// interpolated within their bucket, never above the slowest run (percentile).
type DashboardPoint struct {
	Time       int64   `json:"t"` // unix seconds, the step's start
	Executions int64   `json:"executions"`
	Errors     int64   `json:"errors"`
	P50MS      float64 `json:"p50_ms"`
	P95MS      float64 `json:"p95_ms"`
}

// DashboardTotals sums the range.
type DashboardTotals struct {
	Executions int64   `json:"executions"`
	Errors     int64   `json:"errors"`
	ErrorRate  float64 `json:"error_rate"`
	PerMinute  float64 `json:"per_minute"`
	P50MS      float64 `json:"p50_ms"`
	P95MS      float64 `json:"p95_ms"`
}

// CodeCount is an error code and its answers; the "other" row says how
// many codes it sums in Others.
type CodeCount struct {
	Code   string `json:"code"`
	Count  int64  `json:"count"`
	Others int    `json:"others,omitempty"`
}

// DashboardTool is one tool's calls over the range; the "other" row says
// how many tools it sums in Others.
type DashboardTool struct {
	Tool    string  `json:"tool"`
	Calls   int64   `json:"calls"`
	Errors  int64   `json:"errors"`
	AvgMS   float64 `json:"avg_ms"`
	MaxMS   float64 `json:"max_ms"`
	Others  int     `json:"others,omitempty"`
	totalMS float64
}

// DashboardAdmission is the tenant's share of this replica's admission now
// (docs/limits.md "Admission and overload"), or the whole replica's for an
// operator; refused counts OVERLOADED answers over the range.
type DashboardAdmission struct {
	Running      int   `json:"running"`
	Parked       int   `json:"parked"` // admitted, waiting on a tool
	Queued       int   `json:"queued"`
	Refused      int64 `json:"refused"`
	MaxPerTenant int   `json:"max_per_tenant"`
}

// serveDashboard answers GET /api/dashboard?range=1h|24h|7d for the
// caller's tenant, or every tenant for an operator (docs/dashboard.md).
func (s *Service) serveDashboard(w http.ResponseWriter, r *http.Request) {
	sc, _ := scopeFrom(r)
	name := r.URL.Query().Get("range")
	if name == "" {
		name = "1h"
	}
	rg, ok := dashboardRanges[name]
	if !ok {
		httpapi.Error(w, http.StatusBadRequest, "bad_request", `range must be "1h", "24h" or "7d"`)
		return
	}
	now := time.Now().UTC()
	since := now.Add(-rg.span).Truncate(rg.step)
	rows, err := s.store.Dashboard(r.Context(), sc, since)
	if err != nil {
		s.log.Error("reading the dashboard", "err", err)
		httpapi.Error(w, http.StatusServiceUnavailable, "store_unavailable", "the dashboard could not be read; retry shortly")
		return
	}
	d := buildDashboard(rows, name, since, now, rg.step)
	d.AllTenants = sc == store.AllTenants
	if s.admission != nil {
		st := s.admission.TenantStats(Caller{Scope: sc}.tenant())
		if d.AllTenants {
			st = s.admission.Stats()
		}
		d.Admission = DashboardAdmission{Running: st.Running, Parked: st.Admitted - st.Running, Queued: st.Queued,
			Refused: rows.Errors["OVERLOADED"], MaxPerTenant: s.admission.Limits().MaxExecutionsPerTenant}
	}
	httpapi.Write(w, http.StatusOK, d)
}

// buildDashboard folds per-minute rows into steps from since to now.
func buildDashboard(rows store.DashboardRows, name string, since, now time.Time, step time.Duration) Dashboard {
	d := Dashboard{Range: name, StepSeconds: int64(step / time.Second), Capabilities: rows.Capabilities}
	if d.Capabilities == nil {
		d.Capabilities = []store.CapabilityUses{}
	}
	n := int(now.Sub(since)/step) + 1
	lat := make([]latencyBuckets, n)
	var total latencyBuckets
	d.Series = make([]DashboardPoint, n)
	for i := range d.Series {
		d.Series[i].Time = since.Add(time.Duration(i) * step).Unix()
	}
	for _, m := range rows.Minutes {
		i := int(m.Minute.Sub(since) / step)
		if i < 0 || i >= n {
			continue
		}
		d.Series[i].Executions += m.Executions
		d.Series[i].Errors += m.Errors
		lat[i].add(m)
		total.add(m)
		d.Totals.Executions += m.Executions
		d.Totals.Errors += m.Errors
	}
	for i := range d.Series {
		d.Series[i].P50MS, d.Series[i].P95MS = lat[i].percentile(0.50), lat[i].percentile(0.95)
	}
	d.Totals.P50MS, d.Totals.P95MS = total.percentile(0.50), total.percentile(0.95)
	if d.Totals.Executions > 0 {
		d.Totals.ErrorRate = float64(d.Totals.Errors) / float64(d.Totals.Executions)
	}
	d.Totals.PerMinute = float64(d.Totals.Executions) / now.Sub(since).Minutes()
	d.ErrorsByCode = []CodeCount{}
	for code, c := range rows.Errors {
		d.ErrorsByCode = append(d.ErrorsByCode, CodeCount{Code: code, Count: c})
	}
	slices.SortFunc(d.ErrorsByCode, func(a, b CodeCount) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Code, b.Code)) })
	if len(d.ErrorsByCode) > dashboardTop {
		other := CodeCount{Code: dashboardOther, Others: len(d.ErrorsByCode) - dashboardTop}
		for _, c := range d.ErrorsByCode[dashboardTop:] {
			other.Count += c.Count
		}
		d.ErrorsByCode = append(d.ErrorsByCode[:dashboardTop], other)
	}
	var tools []DashboardTool
	for _, t := range rows.Tools {
		if t.Calls > 0 {
			tools = append(tools, DashboardTool{Tool: t.Tool, Calls: t.Calls, Errors: t.Errors, AvgMS: t.TotalMS / float64(t.Calls), MaxMS: t.MaxMS, totalMS: t.TotalMS})
		}
	}
	d.SlowestTools = top(tools, func(a, b DashboardTool) int {
		return cmp.Or(cmp.Compare(b.AvgMS, a.AvgMS), cmp.Compare(a.Tool, b.Tool))
	}, nil)
	d.FailingTools = top(tools, func(a, b DashboardTool) int {
		return cmp.Or(cmp.Compare(b.Errors, a.Errors), cmp.Compare(a.Tool, b.Tool))
	},
		func(t DashboardTool) bool { return t.Errors > 0 })
	return d
}

// top is the first dashboardTop of list in order, those keep accepts, and
// a last row summing the rest when there are more.
func top(list []DashboardTool, order func(a, b DashboardTool) int, keep func(DashboardTool) bool) []DashboardTool {
	out := []DashboardTool{}
	for _, t := range list {
		if keep == nil || keep(t) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, order)
	if len(out) <= dashboardTop {
		return out
	}
	other := DashboardTool{Tool: dashboardOther, Others: len(out) - dashboardTop}
	for _, t := range out[dashboardTop:] {
		other.Calls += t.Calls
		other.Errors += t.Errors
		other.totalMS += t.totalMS
		other.MaxMS = max(other.MaxMS, t.MaxMS)
	}
	other.AvgMS = other.totalMS / float64(other.Calls)
	return append(out[:dashboardTop:dashboardTop], other)
}

// latencyBuckets are executions per latency bucket (store.LatencyBounds)
// and the slowest of each (0: unknown).
type latencyBuckets struct {
	n     [len(store.LatencyBounds) + 1]int64
	maxMS [len(store.LatencyBounds) + 1]float64
}

func (l *latencyBuckets) add(m store.DashboardMinute) {
	for b, c := range m.Latency {
		l.n[b] += c
		l.maxMS[b] = max(l.maxMS[b], m.LatencyMaxMS[b])
	}
}

// percentile is the p-th fraction of the executions; 0 without any. It is
// interpolated linearly within the bucket that holds it, between the
// bucket's lower bound and the slowest run the bucket saw (its upper bound
// when that is unknown), so it never exceeds an observed run: a bucket's
// upper bound would (docs/dashboard.md).
func (l *latencyBuckets) percentile(p float64) float64 {
	var n int64
	for _, c := range l.n {
		n += c
	}
	if n == 0 {
		return 0
	}
	rank := p * float64(n)
	last := len(store.LatencyBounds) - 1
	var seen int64
	for i, c := range l.n {
		if c == 0 || float64(seen+c) < rank {
			seen += c
			continue
		}
		lo := 0.0
		if i > 0 {
			lo = store.LatencyBounds[min(i-1, last)]
		}
		hi := l.maxMS[i]
		if hi <= 0 || (i <= last && hi > store.LatencyBounds[i]) {
			hi = store.LatencyBounds[min(i, last)]
		}
		hi = max(hi, lo)
		return lo + (hi-lo)*(rank-float64(seen))/float64(c)
	}
	return store.LatencyBounds[last]
}
