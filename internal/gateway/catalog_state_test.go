package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/upstream"
	"github.com/pml-go/pml/internal/wire"
)

func discover(t *testing.T, s *mcp.ClientSession, req wire.DiscoverRequest) wire.DiscoverAnswer {
	t.Helper()
	text, isErr := callTool(t, s, "discover", req)
	if isErr {
		t.Fatalf("discover: %s", text)
	}
	var d wire.DiscoverAnswer
	if err := json.Unmarshal([]byte(text), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// A hosted server that cannot start is told apart from one without tools:
// discover and /healthz show it failed with its start error, the working
// server ready, and the gateway keeps serving.
func TestFailedHostedServerState(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{Config: gateway.FileConfig{Servers: map[string]gateway.ServerEntry{
		"fx":  {ServerConfig: upstream.ServerConfig{Command: testfixture.BuildServer(t)}, Hosted: true},
		"bad": {ServerConfig: upstream.ServerConfig{Command: "pml-no-such-command"}, Hosted: true},
	}}})
	s := g.Connect(t, g.Key, false)
	d := discover(t, s, wire.DiscoverRequest{Pattern: "bad:*"})
	if len(d.Tools) != 0 {
		t.Fatalf("tools of a server that cannot start: %+v", d.Tools)
	}
	bad := d.Servers["bad"]
	if bad.State != "failed" || !strings.Contains(bad.Error, "pml-no-such-command") {
		t.Fatalf("discover servers: %+v", d.Servers)
	}
	if fx := d.Servers["fx"]; fx != (wire.ServerStatus{State: "ready"}) {
		t.Fatalf("fx: %+v", fx)
	}

	res, err := http.Get(g.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var h struct {
		Status  string                       `json:"status"`
		Version string                       `json:"version"`
		Servers map[string]wire.ServerStatus `json:"servers"`
	}
	if err := json.NewDecoder(res.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || h.Status != "ok" || h.Version == "" ||
		h.Servers["bad"].State != "failed" || !strings.Contains(h.Servers["bad"].Error, "pml-no-such-command") ||
		h.Servers["fx"].State != "ready" {
		t.Fatalf("healthz %d: %+v", res.StatusCode, h)
	}
	alive(t, s)
	if d := discover(t, s, wire.DiscoverRequest{Pattern: "fx:*"}); len(d.Tools) == 0 {
		t.Fatal("the working server's tools are gone")
	}
}

// A capability's uses are the times it ran, one meaning wherever it shows
// (docs/protocol.md "uses"): the runs of its shape that were learned plus
// its calls, from code run on the gateway and through the call tool alike.
// Discover, the catalog (GET /mcp, what the web catalog lists) and admin
// show the same number; tools have none. Issue 41: after the two runs
// that made a skill, discover and the catalog said 0 while admin's
// usage_count said 2.
func TestCapabilityUsesThroughDiscover(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	const code = "const s = await mcp.math.add({a: 1, b: 2}); return await mcp.math.add({a: s, b: 3})"
	ref := learn(t, s, code, "add three numbers")
	// Another intent: the same code and intent within learnCacheTTL count
	// once (a burst of identical runs is one write, docs/protocol.md).
	if again := learn(t, s, code, "sum three numbers"); again.ID != ref.ID {
		t.Fatalf("the second run made another capability: %+v, want %+v", again, ref)
	}
	_, action, _ := strings.Cut(ref.Name, ":")
	uses := func(when string, want int64) {
		t.Helper()
		d := discover(t, s, wire.DiscoverRequest{Name: ref.Name})
		if len(d.Tools) != 1 || d.Tools[0].Uses == nil || *d.Tools[0].Uses != want {
			t.Fatalf("discover %s %s: %+v (uses %v), want uses %d", ref.Name, when, d.Tools, func() any {
				if len(d.Tools) == 1 && d.Tools[0].Uses != nil {
					return *d.Tools[0].Uses
				}
				return nil
			}(), want)
		}
		if got := catalogUses(t, g, "?name="+ref.Name, ref.FQDN); got != want {
			t.Fatalf("catalog %s: uses %d, want %d", when, got, want)
		}
		if a, failed := admin(t, s, wire.AdminRequest{Action: "show", Target: ref.Name}); failed.Status != "" || a.Capability.Uses != want {
			t.Fatalf("admin show %s: %+v %+v, want uses %d", when, a.Capability, failed, want)
		}
	}
	uses("after the two runs that made it", 2)
	for range 2 {
		a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: "return await mcp.cap." + action + "({})"})
		if a.Status != wire.StatusSuccess || string(a.Result) != "6" {
			t.Fatalf("calling the capability: %+v", a)
		}
	}
	if text, isErr := callTool(t, s, "call", wire.CallRequest{Tool: ref.Name}); isErr || text != "6" {
		t.Fatalf("call: %s", text)
	}
	uses("after 3 calls more", 5)
	if d := discover(t, s, wire.DiscoverRequest{Name: "math:add"}); len(d.Tools) != 1 || d.Tools[0].Uses != nil {
		t.Fatalf("a tool shows uses: %+v", d.Tools)
	}
	// An unknown capability is not counted and the gateway keeps serving.
	if text, isErr := callTool(t, s, "call", wire.CallRequest{Tool: "cap:no_such_thing"}); !isErr || !strings.Contains(text, "UNKNOWN_TOOL") {
		t.Fatalf("unknown capability: %s", text)
	}
	alive(t, s)
}

// catalogUses is the uses GET /mcp+query shows for fqdn; it fails the test
// when the entry is missing or another type shows uses.
func catalogUses(t *testing.T, g *gatewaytest.Gateway, query, fqdn string) int64 {
	t.Helper()
	var cat struct {
		Items []struct {
			FQDN string `json:"fqdn"`
			Type string `json:"type"`
			Uses *int64 `json:"uses"`
		} `json:"items"`
	}
	req, _ := http.NewRequest(http.MethodGet, g.URL+"/mcp"+query, nil)
	req.Header.Set("Authorization", "Bearer "+g.Key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(res.Body).Decode(&cat)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("catalog %s: %d %v", query, res.StatusCode, err)
	}
	uses := int64(-1)
	for _, it := range cat.Items {
		switch {
		case it.FQDN == fqdn:
			if it.Uses == nil {
				t.Fatalf("catalog %s: %s without uses", query, fqdn)
			}
			uses = *it.Uses
		case it.Uses != nil && it.Type != "code":
			t.Fatalf("a %s entry shows uses: %+v", it.Type, it)
		}
	}
	if uses < 0 {
		t.Fatalf("catalog %s lacks %s: %+v", query, fqdn, cat.Items)
	}
	return uses
}

// A capability learned without an intent is named from what its tools do,
// and ranks below the tools unless the query matches that name.
func TestUndescribedCapabilityRanksBelowTools(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	ref := learn(t, s, "const r = await mcp.json.parse({data: '[1]'}); return await mcp.json.stringify({data: r})", "")
	if ref.Name != "cap:parse_stringify_json" {
		t.Fatalf("name without an intent: %s", ref.Name)
	}
	if d := discover(t, s, wire.DiscoverRequest{Query: "parse stringify json", Limit: 5}); d.Tools[0].ID != ref.Name {
		t.Fatalf("a query matching its name does not find it first: %+v", d.Tools)
	}
	d := discover(t, s, wire.DiscoverRequest{Query: "learned workflow value", Limit: 1000})
	seenCap := false
	for _, tl := range d.Tools {
		switch {
		case tl.ID == ref.Name:
			seenCap = true
			if !tl.Undescribed {
				t.Fatalf("not marked undescribed: %+v", tl)
			}
		case seenCap && tl.Kind == "tool":
			t.Fatalf("tool %s ranked below the undescribed capability: %+v", tl.ID, d.Tools)
		}
	}
	if !seenCap || d.Tools[0].ID == ref.Name {
		t.Fatalf("ranking: %+v", d.Tools)
	}
	_, action, _ := strings.Cut(ref.Name, ":")
	if d := discover(t, s, wire.DiscoverRequest{Query: action}); len(d.Tools) == 0 || d.Tools[0].ID != ref.Name {
		t.Fatalf("query naming it: %+v", d.Tools)
	}
	alive(t, s)
}

// The catalog (GET /mcp) shows a capability's uses, the run that made it
// and its call, listed or looked up by name, and none for tools.
func TestCatalogShowsUses(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	ref := learn(t, s, "const s = await mcp.math.add({a: 1, b: 2}); return await mcp.math.add({a: s, b: 3})", "add three numbers")
	if text, isErr := callTool(t, s, "call", wire.CallRequest{Tool: ref.Name}); isErr || text != "6" {
		t.Fatalf("call: %s", text)
	}
	for _, q := range []string{"?type=code&limit=200", "?name=" + ref.Name} {
		if got := catalogUses(t, g, q, ref.FQDN); got != 2 {
			t.Fatalf("catalog %s uses: %d, want 2 (a learned run and a call)", q, got)
		}
	}
	alive(t, s)
}
