package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/pgtest"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// onBothStores runs f on a gateway over SQLite and over PostgreSQL.
func onBothStores(t *testing.T, f func(t *testing.T, g *gatewaytest.Gateway)) {
	t.Run("sqlite", func(t *testing.T) { f(t, gatewaytest.Start(t, gateway.Options{})) })
	t.Run("postgres", func(t *testing.T) { f(t, gatewaytest.Start(t, gateway.Options{DB: pgtest.Start(t)})) })
}

func capabilityOf(t *testing.T, g *gatewaytest.Gateway, id string) store.Capability {
	t.Helper()
	g.Service.Learner().Wait()
	c, err := g.Service.Store().CapabilityByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func properties(t *testing.T, schema json.RawMessage) map[string]map[string]any {
	t.Helper()
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	return s.Properties
}

// Two runs of one shape are one capability whose code reads the varying
// value from args: called with a new value it does the new job, with none
// it repeats the first run, and its declaration is typed.
func TestLearnedCapabilityTakesItsInputs(t *testing.T) {
	onBothStores(t, func(t *testing.T, g *gatewaytest.Gateway) {
		s := g.Connect(t, g.Key, false)
		run := `const p = await mcp.json.parse({data: %q}); const up = await mcp.string.upper({text: p.name}); return up + "!"`
		first := learn(t, s, fmt.Sprintf(run, `{"name":"ada"}`), "")
		second := learn(t, s, fmt.Sprintf(run, `{"name":"bob"}`), "")
		if first.ID != second.ID || first.Name != "cap:parse_upper_string" {
			t.Fatalf("two runs of one shape: %+v %+v", first, second)
		}
		c := capabilityOf(t, g, first.ID)
		if !c.ParamsLifted || !strings.Contains(c.Code, "mcp.json.parse({data: args.data})") || strings.Contains(c.Code, "ada") {
			t.Fatalf("learned code %q", c.Code)
		}
		data := properties(t, c.ArgsSchema)["data"]
		if data["type"] != "string" || data["default"] != `{"name":"ada"}` || fmt.Sprint(data["examples"]) != `[{"name":"ada"} {"name":"bob"}]` {
			t.Fatalf("parameter data: %v", data)
		}
		if out := properties(t, json.RawMessage(`{"properties":{"out":`+string(c.OutputSchema)+`}}`))["out"]; fmt.Sprint(out) != "map[type:string]" {
			t.Fatalf("output schema %s", c.OutputSchema)
		}
		d := discover(t, s, wire.DiscoverRequest{Name: first.Name})
		if len(d.Tools) != 1 || !strings.Contains(d.Tools[0].Declaration, "data: string") || strings.Contains(d.Tools[0].Declaration, "ada") ||
			!strings.HasSuffix(d.Tools[0].Declaration, "Promise<string>") {
			t.Fatalf("declaration %+v", d.Tools)
		}
		a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return [await mcp.cap.parse_upper_string({data: '{"name":"cy"}'}), await mcp.cap.parse_upper_string({data: '{"name":"ada"}'})]`})
		if a.Status != wire.StatusSuccess || string(a.Result) != `["CY!","ADA!"]` {
			t.Fatalf("calls: %+v %s", a, a.Result)
		}
		// Arguments that do not match: the validation error carries the
		// declaration, and the next call is served.
		bad := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.cap.parse_upper_string({data: 42})`})
		wantError(t, bad, pmlerr.ToolError)
		if !strings.Contains(bad.Error, "invalid arguments") || !strings.Contains(bad.Error, "mcp.cap.parse_upper_string(args: {") {
			t.Fatalf("validation error: %s", bad.Error)
		}
		text, isErr := callTool(t, s, "call", wire.CallRequest{Tool: first.Name, Args: json.RawMessage(`{"data": [1]}`)})
		if !isErr || !strings.Contains(text, "declaration") {
			t.Fatalf("call with bad arguments: %s", text)
		}
		alive(t, s)
	})
}

// A value that differs between runs outside a tool's arguments becomes a
// parameter at the next run; one that stays the same shapes the code.
func TestVaryingValuesBecomeParameters(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	run := `const parts = await mcp.string.split({text: %q, separator: ","}); return parts.map((p) => p.trim()).join(%q)`
	ref := learn(t, s, fmt.Sprintf(run, "a, b", " | "), "Rejoin a list")
	learn(t, s, fmt.Sprintf(run, "c, d, e", " + "), "Rejoin a list")
	c := capabilityOf(t, g, ref.ID)
	// The separator never varied: it configures the code and stays in it.
	if !strings.Contains(c.Code, ".join(args.separator)") || !strings.Contains(c.Code, `{text: args.text, separator: ","}`) {
		t.Fatalf("code %q", c.Code)
	}
	if j := properties(t, c.ArgsSchema)["separator"]; j["default"] != " | " {
		t.Fatalf("join parameter %v", j)
	}
	a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.cap.rejoin_list({text: "x,y", separator: "/"})`})
	if a.Status != wire.StatusSuccess || string(a.Result) != `"x/y"` {
		t.Fatalf("%+v %s", a, a.Result)
	}
}

// Code whose literals cannot be lifted safely is learned as it is.
func TestUnliftableCodeIsLearnedWithoutParameters(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	for _, code := range []string{
		`const k = "data"; const v = await mcp.json.parse({[k]: "[1]"}); return v.length`,
		`const args2 = {args: 1}; const v = await mcp.json.parse({data: "[1,2]"}); return [v, (function (args) { return args })(3)]`,
	} {
		ref := learn(t, s, code, "")
		if c := capabilityOf(t, g, ref.ID); c.ParamsLifted || c.Code != code {
			t.Errorf("%q learned as %q (lifted %v)", code, c.Code, c.ParamsLifted)
		}
	}
	alive(t, s)
}

// A capability learned before parameters were lifted is served as it is,
// and lifted at the next run of its shape.
func TestCapabilityLearnedBeforeIsLiftedAtItsNextRun(t *testing.T) {
	onBothStores(t, func(t *testing.T, g *gatewaytest.Gateway) {
		s := g.Connect(t, g.Key, false)
		old := `const v = await mcp.json.parse({data: "[1,2,3]"}); return v.length * 2`
		saved, err := g.Service.Store().SaveCapability(context.Background(), store.Capability{
			Scope: store.Scope{Org: "acme", Project: "web"}, Namespace: "cap", Action: "double_count",
			Code: old, CodeHash: analysisShape(old), ToolsUsed: []string{"json:parse"}, Routing: "server"})
		if err != nil {
			t.Fatal(err)
		}
		a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.cap.double_count({})`})
		if a.Status != wire.StatusSuccess || string(a.Result) != "6" {
			t.Fatalf("old capability served: %+v %s", a, a.Result)
		}
		learn(t, s, `const v = await mcp.json.parse({data: "[1]"}); return v.length * 2`, "")
		c := capabilityOf(t, g, saved.ID)
		if !c.ParamsLifted || !strings.Contains(c.Code, "{data: args.data}") || properties(t, c.ArgsSchema)["data"]["default"] != "[1,2,3]" {
			t.Fatalf("after its next run: %+v", c)
		}
		a = gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return [await mcp.cap.double_count({data: "[1,2,3]"}), await mcp.cap.double_count({data: "[0]"})]`})
		if a.Status != wire.StatusSuccess || string(a.Result) != "[6,2]" {
			t.Fatalf("lifted capability: %+v %s", a, a.Result)
		}
	})
}

// A public capability reaches another tenant without the values of its
// owner's runs: not in its code, schema, description or the other tenant's
// trace of a call; the other tenant sees the parameters and their types.
func TestSharedCapabilityLeaksNoValues(t *testing.T) {
	g := startRegistry(t)
	owner := g.Connect(t, g.Key, false)
	const secretish = "acme-q3-forecast.csv"
	run := `const rows = await mcp.string.split({text: %q, separator: "-"}); return rows.length`
	ref := learn(t, owner, fmt.Sprintf(run, secretish), "Count the parts of acme-q3-forecast.csv")
	learn(t, owner, fmt.Sprintf(run, "other-name"), "Count the parts of acme-q3-forecast.csv")
	if _, failed := admin(t, owner, visibility(ref.ID, "public")); failed.Status != "" {
		t.Fatal(failed)
	}
	g.Service.Learner().Wait()
	otherKey := g.NewKey(t, store.Scope{Org: "globex", Project: "web"})
	other := g.Connect(t, otherKey, true) // a package: it pinned and approved the version itself
	qualified := "acme.web.cap:count_parts_acme_q3"

	var seen []string
	d := discover(t, other, wire.DiscoverRequest{Name: qualified, Schemas: true})
	if len(d.Tools) != 1 {
		t.Fatalf("other tenant's discover: %+v", d)
	}
	hit := d.Tools[0]
	if !strings.Contains(hit.Declaration, "text: string") || !strings.Contains(string(hit.InputSchema), `"required":["`) {
		t.Fatalf("the other tenant does not see the typed, required parameters: %+v", hit)
	}
	body, _ := json.Marshal(d)
	seen = append(seen, string(body))
	seen = append(seen, string(get(t, g, otherKey, "/mcp/"+ref.FQDN).body))
	seen = append(seen, string(get(t, g, otherKey, "/mcp?type=code").body))
	// Without arguments nothing fills them in: a validation error, no run.
	a := gatewaytest.Execute(t, other, wire.ExecuteRequest{Code: `return await mcp["acme.web.cap"].count_parts_acme_q3({})`})
	wantError(t, a, pmlerr.ToolError)
	seen = append(seen, a.Error)
	a = gatewaytest.Execute(t, other, wire.ExecuteRequest{Code: `return await mcp["acme.web.cap"].count_parts_acme_q3({text: "x-y-z"})`})
	if a.Status != wire.StatusSuccess || string(a.Result) != "3" {
		t.Fatalf("other tenant's call: %+v %s", a, a.Result)
	}
	tr := get(t, g, otherKey, "/api/traces?limit=50")
	seen = append(seen, string(tr.body))
	var list struct {
		Traces []struct {
			ID string `json:"trace_id"`
		} `json:"traces"`
	}
	_ = json.Unmarshal(tr.body, &list)
	for _, x := range list.Traces {
		seen = append(seen, string(get(t, g, otherKey, "/api/traces/"+x.ID).body))
	}
	for i, text := range seen {
		for _, v := range []string{"acme-q3", "forecast", "other-name"} {
			if strings.Contains(text, v) && !strings.Contains(text, "count_parts_acme_q3") {
				t.Errorf("answer %d shows the owner's value %q: %.300s", i, v, text)
			}
			if strings.Contains(strings.ReplaceAll(text, "count_parts_acme_q3", ""), v) {
				t.Errorf("answer %d shows the owner's value %q: %.300s", i, v, text)
			}
		}
	}
	// The owner still sees its defaults and examples.
	own := discover(t, owner, wire.DiscoverRequest{Name: ref.Name, Schemas: true})
	if !strings.Contains(string(own.Tools[0].InputSchema), secretish) {
		t.Fatalf("the owner's view lost its defaults: %s", own.Tools[0].InputSchema)
	}
	alive(t, other)
}

// The tool graph: traces teach which tools follow which, per tenant;
// discover's lookup by name answers them as related, and a query that finds
// a tool lifts the tool that usually follows it.
func TestToolGraphFromTraces(t *testing.T) {
	onBothStores(t, func(t *testing.T, g *gatewaytest.Gateway) {
		s := g.Connect(t, g.Key, false)
		for i := range 3 {
			a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: fmt.Sprintf(
				`const h = await mcp.crypto.sha256({data: "v%d"}); return await mcp.encoding.base64_encode({data: h})`, i)})
			if a.Status != wire.StatusSuccess {
				t.Fatal(a)
			}
		}
		g.Service.Learner().Wait()
		d := discover(t, s, wire.DiscoverRequest{Name: "crypto:sha256"})
		if len(d.Related) == 0 || d.Related[0].Tool != "encoding:base64_encode" || d.Related[0].Count != 3 {
			t.Fatalf("related of crypto:sha256: %+v", d.Related)
		}
		// Another tenant learned nothing from these runs.
		other := g.Connect(t, g.NewKey(t, store.Scope{Org: "globex", Project: "web"}), false)
		if d := discover(t, other, wire.DiscoverRequest{Name: "crypto:sha256"}); len(d.Related) != 0 {
			t.Fatalf("another tenant's related: %+v", d.Related)
		}
		// "sha256 digest" finds crypto:sha256; what follows it ranks above
		// the other encoders for this tenant, not for the other.
		rank := func(s *mcp.ClientSession) int {
			d := discover(t, s, wire.DiscoverRequest{Query: "sha256 digest base64", Limit: 20})
			return slices.IndexFunc(d.Tools, func(x wire.DiscoveredTool) bool { return x.ID == "encoding:base64_encode" })
		}
		if mine, theirs := rank(s), rank(other); mine < 0 || theirs >= 0 && mine > theirs {
			t.Fatalf("base64_encode ranks %d for the tenant that uses it after sha256, %d for another", mine, theirs)
		}
	})
}

// A member's posted traces can only teach its own tenant's graph, with
// bounded tool ids, and cannot count outcomes of another tenant's
// capability.
func TestPostedTracesTeachOnlyTheirTenant(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	ref := learn(t, s, `const v = await mcp.json.parse({data: "[1]"}); return v.length + 1`, "count plus one")
	globexKey := g.NewKey(t, store.Scope{Org: "globex", Project: "web"})
	now := time.Now().UTC()
	var batch []tracing.Trace
	for i := range 20 {
		batch = append(batch, tracing.Trace{TraceID: fmt.Sprintf("%032x", i+1), WorkflowID: "w", ExecutedLocally: true,
			CapabilityFQDN: ref.FQDN, Success: false, StartedAt: now, Tasks: []tracing.Task{
				{TaskID: "t1", Tool: "a:b", ToolID: "a:b", Success: true, StartedAt: now},
				{TaskID: "t2", Tool: "x", ToolID: "dir/not:a_tool", Success: true, StartedAt: now.Add(time.Millisecond)},
				{TaskID: "t3", Tool: "c:d", ToolID: "c:d", Success: true, StartedAt: now.Add(2 * time.Millisecond)},
			}})
	}
	body, _ := json.Marshal(map[string]any{"traces": batch})
	if status, text := postJSON(t, g, globexKey, "/api/traces", body); status >= 300 {
		t.Fatalf("posting traces: HTTP %d %s", status, text)
	}
	g.Service.Learner().Wait()
	if c := capabilityOf(t, g, ref.ID); strings.Contains(c.RecentRuns, "0") {
		t.Fatalf("another tenant's traces counted failures of acme's capability: %q", c.RecentRuns)
	}
	edges, err := g.Service.Store().ToolEdges(context.Background(), store.Scope{Org: "globex", Project: "web"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range edges {
		if len(e.From) > 257 || len(e.To) > 257 {
			t.Fatalf("an unbounded tool id entered the graph: %+v", e)
		}
	}
	if len(edges) != 1 || edges[0].From != "a:b" || edges[0].To != "c:d" || edges[0].Follows != 20 {
		t.Fatalf("globex's graph: %+v", edges)
	}
	if acme, _ := g.Service.Store().ToolEdges(context.Background(), store.Scope{Org: "acme", Project: "web"}); slices.ContainsFunc(acme, func(e store.ToolEdge) bool { return e.From == "a:b" }) {
		t.Fatalf("globex's traces reached acme's graph: %+v", acme)
	}
	alive(t, s)
}

func postJSON(t *testing.T, g *gatewaytest.Gateway, key, path string, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.URL+path, strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(text)
}

func analysisShape(code string) string { return analysis.ShapeOf(code).Hash }

// A capability that failed in most of its recent runs drops below the tool
// it is made of; one that succeeds ranks above it.
func TestFailingCapabilityDrops(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	ref := learn(t, s, `const h = await mcp.crypto.sha256({data: "x"}); return h.slice(0, 8)`, "Short sha256 digest of a text")
	rank := func() (capRank, toolRank int) {
		d := discover(t, s, wire.DiscoverRequest{Query: "sha256 digest of text", Limit: 10})
		return slices.IndexFunc(d.Tools, func(x wire.DiscoveredTool) bool { return x.ID == ref.Name }),
			slices.IndexFunc(d.Tools, func(x wire.DiscoveredTool) bool { return x.ID == "crypto:sha256" })
	}
	if c, tool := rank(); c < 0 || c > tool {
		t.Fatalf("a working capability ranks %d, its tool %d", c, tool)
	}
	if err := g.Service.Store().RecordCapabilityRuns(context.Background(), ref.ID, "1000000"); err != nil {
		t.Fatal(err)
	}
	if c, tool := rank(); c >= 0 && c < tool {
		t.Fatalf("a capability failing 6 of its last 7 runs ranks %d, above its tool (%d)", c, tool)
	}
}
