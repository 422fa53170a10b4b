package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/store"
)

func runDashboard(t *testing.T, open func(t *testing.T) store.Store) {
	subtests(t, open, map[string]func(t *testing.T, s store.Store){
		"RollupsPerMinute":       testDashboardRollups,
		"ResentTraceCountsOnce":  testDashboardResent,
		"ScopedAndSinceBounded":  testDashboardScoped,
		"OldRollupsArePruned":    testDashboardPruned,
		"ToolsBoundedPerHour":    testDashboardToolsBounded,
		"UnknownCodesFolded":     testDashboardUnknownCodes,
		"WholeHoursAndMinutes":   testDashboardSplitRead,
		"TraceWithoutStatsIsNot": testDashboardNoStats,
		"AllTenantsSumsEvery":    testDashboardAllTenants,
		"LatencyKeepsTheSlowest": testDashboardLatencyMax,
	})
}

// statTrace is a trace of a run of ms, with an error code when code is set,
// and the tool calls given.
func statTrace(sc store.Scope, id string, at time.Time, ms float64, code string, tools ...store.ToolStat) store.Trace {
	tr := trace(sc, id, 0)
	tr.StartedAt = at
	tr.Success = code == ""
	tr.Stats = &store.TraceStats{DurationMS: ms, ErrorCode: code, Tools: tools}
	return tr
}

func testDashboardRollups(t *testing.T, s store.Store) {
	now := time.Now().UTC().Truncate(time.Minute)
	m1, m2 := now.Add(-3*time.Minute), now.Add(-time.Minute)
	add := store.ToolStat{Tool: "math:add", Calls: 2, TotalMS: 3, MaxMS: 2}
	noErr(t, put(t.Context(), s, []store.Trace{
		statTrace(acmeWeb, "a", m1.Add(5*time.Second), 0.5, "", add),
		statTrace(acmeWeb, "b", m1.Add(40*time.Second), 150, "TOOL_ERROR", store.ToolStat{Tool: "fs:read", Calls: 1, Errors: 1, TotalMS: 140, MaxMS: 140}),
		statTrace(acmeWeb, "c", m2.Add(time.Second), 7000, "", add, store.ToolStat{Tool: "math:add", Calls: 1, TotalMS: 9, MaxMS: 9}),
	}))
	// A capability's nested run adds its tools, not an execution.
	nested := statTrace(acmeWeb, "c-child", m2.Add(2*time.Second), 5, "", add)
	nested.ParentID = "c"
	noErr(t, put(t.Context(), s, []store.Trace{nested}))

	d := must(s.Dashboard(t.Context(), acmeWeb, now.Add(-time.Hour))).of(t)
	if len(d.Minutes) != 2 {
		t.Fatalf("%d minutes, want 2: %+v", len(d.Minutes), d.Minutes)
	}
	first, second := d.Minutes[0], d.Minutes[1]
	if !first.Minute.Equal(m1) || first.Executions != 2 || first.Errors != 1 {
		t.Fatalf("first minute %+v", first)
	}
	if first.Latency[store.LatencyBucket(0.5)] != 1 || first.Latency[store.LatencyBucket(150)] != 1 {
		t.Fatalf("first minute's latency %v", first.Latency)
	}
	if !second.Minute.Equal(m2) || second.Executions != 1 || second.Latency[store.LatencyBucket(7000)] != 1 {
		t.Fatalf("second minute %+v", second)
	}
	if d.Errors["TOOL_ERROR"] != 1 || len(d.Errors) != 1 {
		t.Fatalf("errors %v", d.Errors)
	}
	tools := map[string]store.ToolStat{}
	for _, ts := range d.Tools {
		tools[ts.Tool] = ts
	}
	if a := tools["math:add"]; a.Calls != 7 || a.TotalMS != 18 || a.MaxMS != 9 || a.Errors != 0 {
		t.Fatalf("math:add %+v", a)
	}
	if r := tools["fs:read"]; r.Calls != 1 || r.Errors != 1 || r.MaxMS != 140 {
		t.Fatalf("fs:read %+v", r)
	}

	// The most used capabilities, another project's aside.
	busy := must(s.SaveCapability(t.Context(), capability(acmeWeb, "cap", "busy", "return 1", store.VisibilityPrivate))).of(t)
	quiet := must(s.SaveCapability(t.Context(), capability(acmeWeb, "cap", "quiet", "return 2", store.VisibilityPrivate))).of(t)
	must(s.SaveCapability(t.Context(), capability(acmeWeb, "cap", "unused", "return 3", store.VisibilityPrivate))).of(t)
	foreign := must(s.SaveCapability(t.Context(), capability(acmeAPI, "cap", "foreign", "return 4", store.VisibilityPublic))).of(t)
	for _, c := range []store.Capability{busy, busy, busy, quiet, foreign} {
		noErr(t, s.CountCapabilityUse(t.Context(), c.ID))
	}
	d = must(s.Dashboard(t.Context(), acmeWeb, now.Add(-time.Hour))).of(t)
	// Uses are the times each ran: the run that saved it plus its calls
	// (store.Capability.TimesRun).
	want := []store.CapabilityUses{{Name: "cap:busy", Uses: 4}, {Name: "cap:quiet", Uses: 2}, {Name: "cap:unused", Uses: 1}}
	if !slices.Equal(d.Capabilities, want) {
		t.Fatalf("capabilities %+v, want %+v", d.Capabilities, want)
	}
}

func testDashboardResent(t *testing.T, s store.Store) {
	now := time.Now().UTC()
	tr := statTrace(acmeWeb, "once", now, 3, "", store.ToolStat{Tool: "json:parse", Calls: 1, TotalMS: 1, MaxMS: 1})
	for range 3 {
		noErr(t, put(t.Context(), s, []store.Trace{tr}))
	}
	d := must(s.Dashboard(t.Context(), acmeWeb, now.Add(-time.Hour))).of(t)
	if len(d.Minutes) != 1 || d.Minutes[0].Executions != 1 || len(d.Tools) != 1 || d.Tools[0].Calls != 1 {
		t.Fatalf("a trace sent 3 times: %+v", d)
	}
}

func testDashboardScoped(t *testing.T, s store.Store) {
	now := time.Now().UTC()
	noErr(t, put(t.Context(), s, []store.Trace{
		statTrace(acmeWeb, "web", now, 1, ""),
		statTrace(acmeAPI, "api", now, 1, "INTERNAL_ERROR"),
		statTrace(acmeWeb, "old", now.Add(-2*time.Hour), 1, "TOOL_ERROR"),
	}))
	d := must(s.Dashboard(t.Context(), acmeWeb, now.Add(-time.Hour))).of(t)
	if len(d.Minutes) != 1 || d.Minutes[0].Executions != 1 || len(d.Errors) != 0 {
		t.Fatalf("another project's or older rollups leaked: %+v", d)
	}
}

func testDashboardPruned(t *testing.T, s store.Store) {
	now := time.Now().UTC()
	noErr(t, put(t.Context(), s, []store.Trace{
		statTrace(acmeWeb, "ancient", now.Add(-store.DashboardKeep-time.Hour), 1, "TOOL_ERROR", store.ToolStat{Tool: "x:y", Calls: 1}),
		statTrace(acmeWeb, "fresh", now, 1, ""),
	}))
	if _, err := s.PruneTraces(t.Context(), store.TraceRetention{}); err != nil {
		t.Fatal(err)
	}
	d := must(s.Dashboard(t.Context(), acmeWeb, now.Add(-10*24*time.Hour))).of(t)
	if len(d.Minutes) != 1 || len(d.Errors) != 0 || len(d.Tools) != 0 {
		t.Fatalf("rollups older than %v kept: %+v", store.DashboardKeep, d)
	}
}

func testDashboardNoStats(t *testing.T, s store.Store) {
	noErr(t, put(t.Context(), s, []store.Trace{trace(acmeWeb, "plain", 0)}))
	d := must(s.Dashboard(t.Context(), acmeWeb, t0.Add(-time.Hour))).of(t)
	if len(d.Minutes) != 0 {
		t.Fatalf("a trace without stats was rolled up: %+v", d)
	}
}

// The operator's view sums every tenant, naming each capability's tenant.
func testDashboardAllTenants(t *testing.T, s store.Store) {
	now := time.Now().UTC()
	noErr(t, put(t.Context(), s, []store.Trace{
		statTrace(acmeWeb, "w", now, 3, "", store.ToolStat{Tool: "math:add", Calls: 1, TotalMS: 1, MaxMS: 1}),
		statTrace(acmeAPI, "a", now, 700, "TOOL_ERROR", store.ToolStat{Tool: "math:add", Calls: 2, Errors: 1, TotalMS: 5, MaxMS: 4}),
	}))
	c := must(s.SaveCapability(t.Context(), capability(acmeAPI, "cap", "x", "return 1", store.VisibilityPrivate))).of(t)
	noErr(t, s.CountCapabilityUse(t.Context(), c.ID))
	d := must(s.Dashboard(t.Context(), store.AllTenants, now.Add(-time.Hour))).of(t)
	if len(d.Minutes) != 1 || d.Minutes[0].Executions != 2 || d.Minutes[0].Errors != 1 ||
		d.Minutes[0].Latency[store.LatencyBucket(3)] != 1 || d.Minutes[0].Latency[store.LatencyBucket(700)] != 1 {
		t.Fatalf("all tenants' minutes: %+v", d.Minutes)
	}
	if len(d.Tools) != 1 || d.Tools[0].Calls != 3 || d.Tools[0].MaxMS != 4 || d.Errors["TOOL_ERROR"] != 1 {
		t.Fatalf("all tenants' tools %+v, errors %v", d.Tools, d.Errors)
	}
	if len(d.Capabilities) != 1 || d.Capabilities[0].Name != "acme/api cap:x" {
		t.Fatalf("all tenants' capabilities %+v", d.Capabilities)
	}
	// A tenant's own view is unchanged: one execution.
	if own := must(s.Dashboard(t.Context(), acmeWeb, now.Add(-time.Hour))).of(t); own.Minutes[0].Executions != 1 {
		t.Fatalf("one tenant's view: %+v", own.Minutes)
	}
}

// A tenant's hour holds at most store.MaxDashToolsPerHour tools in the
// rollups, whatever names its traces carry: issue 29's flood of unique tool
// names is counted under store.OtherTools past the bound, and no call is
// lost.
func testDashboardToolsBounded(t *testing.T, s store.Store) {
	now := time.Now().UTC()
	var calls int64
	for b := range 5 {
		var batch []store.Trace
		for i := range 40 {
			var tools []store.ToolStat
			for k := range 64 {
				tools = append(tools, store.ToolStat{Tool: fmt.Sprintf("flood:t%d_%d_%d", b, i, k), Calls: 1, TotalMS: 1, MaxMS: 1})
				calls++
			}
			batch = append(batch, statTrace(acmeWeb, fmt.Sprintf("f%d-%d", b, i), now.Add(-time.Duration(i)*time.Second), 1, "", tools...))
		}
		noErr(t, put(t.Context(), s, batch))
	}
	noErr(t, put(t.Context(), s, []store.Trace{statTrace(acmeAPI, "other", now, 1, "", store.ToolStat{Tool: "math:add", Calls: 1})}))
	for _, since := range []time.Time{now.Add(-time.Hour), now.Add(-7 * 24 * time.Hour)} {
		d := must(s.Dashboard(t.Context(), acmeWeb, since)).of(t)
		var sum int64
		for _, ts := range d.Tools {
			sum += ts.Calls
		}
		// One hour, or two when now is early in its hour's first minutes.
		if len(d.Tools) > 2*store.MaxDashToolsPerHour || sum != calls {
			t.Errorf("since %v: %d tools, %d calls; want at most %d tools and %d calls", now.Sub(since), len(d.Tools), sum, 2*store.MaxDashToolsPerHour, calls)
		}
	}
	// Another tenant's hour has room of its own.
	d := must(s.Dashboard(t.Context(), acmeAPI, now.Add(-time.Hour))).of(t)
	if len(d.Tools) != 1 || d.Tools[0].Tool != "math:add" {
		t.Errorf("another tenant's tools: %+v", d.Tools)
	}
}

// An error code outside the wire contract's is rolled up as UNKNOWN.
func testDashboardUnknownCodes(t *testing.T, s store.Store) {
	now := time.Now().UTC()
	var batch []store.Trace
	for i := range 50 {
		batch = append(batch, statTrace(acmeWeb, fmt.Sprintf("e%d", i), now, 1, fmt.Sprintf("MADE_UP_%d", i)))
	}
	batch = append(batch, statTrace(acmeWeb, "real", now, 1, "TOOL_ERROR"))
	noErr(t, put(t.Context(), s, batch))
	for _, since := range []time.Time{now.Add(-time.Hour), now.Add(-24 * time.Hour)} {
		d := must(s.Dashboard(t.Context(), acmeWeb, since)).of(t)
		if len(d.Errors) != 2 || d.Errors["UNKNOWN"] != 50 || d.Errors["TOOL_ERROR"] != 1 {
			t.Errorf("errors %v", d.Errors)
		}
	}
}

// Errors and tools over a range that does not start on the hour count the
// minutes before its first whole hour once, and nothing before the range.
func testDashboardSplitRead(t *testing.T, s store.Store) {
	now := time.Now().UTC()
	hour := now.Truncate(time.Hour).Add(-3 * time.Hour)
	tool := func(name string) store.ToolStat { return store.ToolStat{Tool: name, Calls: 1, TotalMS: 1, MaxMS: 1} }
	noErr(t, put(t.Context(), s, []store.Trace{
		statTrace(acmeWeb, "before", hour.Add(10*time.Minute), 1, "TOOL_ERROR", tool("a:before")),
		statTrace(acmeWeb, "head", hour.Add(40*time.Minute), 1, "CODE_ERROR", tool("a:head")),
		statTrace(acmeWeb, "whole", hour.Add(90*time.Minute), 1, "CODE_ERROR", tool("a:whole")),
	}))
	d := must(s.Dashboard(t.Context(), acmeWeb, hour.Add(30*time.Minute))).of(t)
	if len(d.Errors) != 1 || d.Errors["CODE_ERROR"] != 2 {
		t.Errorf("errors %v; want CODE_ERROR twice", d.Errors)
	}
	names := []string{}
	for _, ts := range d.Tools {
		names = append(names, ts.Tool)
	}
	slices.Sort(names)
	sameStrings(t, "tools", names, []string{"a:head", "a:whole"})
}

// Each latency bucket of a minute keeps its slowest execution, across
// batches and, for every tenant, across tenants: the dashboard's
// percentiles never exceed it (issue 30, item 8).
func testDashboardLatencyMax(t *testing.T, s store.Store) {
	now := time.Now().UTC().Truncate(time.Minute)
	noErr(t, put(t.Context(), s, []store.Trace{statTrace(acmeWeb, "slow", now, 2010, "")}))
	noErr(t, put(t.Context(), s, []store.Trace{statTrace(acmeWeb, "slower", now.Add(time.Second), 3000, ""), statTrace(acmeWeb, "fast", now.Add(2*time.Second), 2500, "")}))
	noErr(t, put(t.Context(), s, []store.Trace{statTrace(acmeAPI, "other", now.Add(3*time.Second), 4000, "")}))
	b := store.LatencyBucket(2010)
	d := must(s.Dashboard(t.Context(), acmeWeb, now.Add(-time.Hour))).of(t)
	if len(d.Minutes) != 1 || d.Minutes[0].Latency[b] != 3 || d.Minutes[0].LatencyMaxMS[b] != 3000 {
		t.Fatalf("minutes %+v", d.Minutes)
	}
	all := must(s.Dashboard(t.Context(), store.AllTenants, now.Add(-time.Hour))).of(t)
	if len(all.Minutes) != 1 || all.Minutes[0].Latency[b] != 4 || all.Minutes[0].LatencyMaxMS[b] != 4000 {
		t.Fatalf("all tenants' minutes %+v", all.Minutes)
	}
}
