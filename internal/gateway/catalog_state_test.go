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

// Every call of a capability counts once, from code run on the gateway and
// through the call tool alike; discover shows the count, tools have none.
func TestCapabilityUsesThroughDiscover(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	ref := learn(t, s, "const s = await mcp.math.add({a: 1, b: 2}); return await mcp.math.add({a: s, b: 3})", "add three numbers")
	_, action, _ := strings.Cut(ref.Name, ":")
	uses := func() int64 {
		t.Helper()
		d := discover(t, s, wire.DiscoverRequest{Name: ref.Name})
		if len(d.Tools) != 1 || d.Tools[0].Uses == nil {
			t.Fatalf("discover %s: %+v", ref.Name, d.Tools)
		}
		return *d.Tools[0].Uses
	}
	if n := uses(); n != 0 {
		t.Fatalf("uses before any call = %d", n)
	}
	for range 2 {
		a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: "return await mcp.cap." + action + "({})"})
		if a.Status != wire.StatusSuccess || string(a.Result) != "6" {
			t.Fatalf("calling the capability: %+v", a)
		}
	}
	if text, isErr := callTool(t, s, "call", wire.CallRequest{Tool: ref.Name}); isErr || text != "6" {
		t.Fatalf("call: %s", text)
	}
	if n := uses(); n != 3 {
		t.Fatalf("uses after 3 calls = %d", n)
	}
	if d := discover(t, s, wire.DiscoverRequest{Name: "math:add"}); len(d.Tools) != 1 || d.Tools[0].Uses != nil {
		t.Fatalf("a tool shows uses: %+v", d.Tools)
	}
	// An unknown capability is not counted and the gateway keeps serving.
	if text, isErr := callTool(t, s, "call", wire.CallRequest{Tool: "cap:no_such_thing"}); !isErr || !strings.Contains(text, "UNKNOWN_TOOL") {
		t.Fatalf("unknown capability: %s", text)
	}
	alive(t, s)
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

// The catalog (GET /mcp) shows a capability's uses, and none for tools.
func TestCatalogShowsUses(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	ref := learn(t, s, "const s = await mcp.math.add({a: 1, b: 2}); return await mcp.math.add({a: s, b: 3})", "add three numbers")
	if text, isErr := callTool(t, s, "call", wire.CallRequest{Tool: ref.Name}); isErr || text != "6" {
		t.Fatalf("call: %s", text)
	}
	var cat struct {
		Items []struct {
			FQDN string `json:"fqdn"`
			Type string `json:"type"`
			Uses *int64 `json:"uses"`
		} `json:"items"`
	}
	for _, q := range []string{"?type=code&limit=200", "?name=" + ref.Name} {
		req, _ := http.NewRequest(http.MethodGet, g.URL+"/mcp"+q, nil)
		req.Header.Set("Authorization", "Bearer "+g.Key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(res.Body).Decode(&cat)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("catalog %s: %d %v", q, res.StatusCode, err)
		}
		found := false
		for _, it := range cat.Items {
			switch {
			case it.FQDN == ref.FQDN:
				found = true
				if it.Uses == nil || *it.Uses != 1 {
					t.Fatalf("catalog %s uses: %v", q, it.Uses)
				}
			case it.Uses != nil && it.Type != "code":
				t.Fatalf("a %s entry shows uses: %+v", it.Type, it)
			}
		}
		if !found {
			t.Fatalf("catalog %s lacks %s: %+v", q, ref.FQDN, cat.Items)
		}
	}
	alive(t, s)
}
