package gateway_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/pgtest"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/upstream"
	"github.com/pml-go/pml/internal/wire"
)

// parseThenHash is code using a pair of built-ins: the global graph's edge
// json:parse → crypto:sha256.
func parseThenHash(i int) string {
	return fmt.Sprintf(`const p = await mcp.json.parse({data: '{"v": "%d"}'}); return await mcp.crypto.sha256({data: p.v})`, i)
}

func tenantSession(t *testing.T, g *gatewaytest.Gateway, org string) *mcp.ClientSession {
	t.Helper()
	return g.Connect(t, g.NewKey(t, store.Scope{Org: org, Project: "web"}), false)
}

func runOK(t *testing.T, s *mcp.ClientSession, code string) {
	t.Helper()
	if a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: code}); a.Status != wire.StatusSuccess {
		t.Fatalf("execute: %+v", a)
	}
}

// liftedAfter is what discover's graph lifts after tool for s.
func liftedAfter(t *testing.T, s *mcp.ClientSession, tool string) []wire.Neighbor {
	t.Helper()
	return discover(t, s, wire.DiscoverRequest{Query: "parse json", Graph: true}).Graph[tool]
}

// The global layer end to end in one gateway: an edge two orgs use is not
// shown to a newcomer; the third org's runs make it global, and the
// newcomer's discover lifts it and types crypto:sha256's result from the
// three orgs' calls, marked inferred. An opted-out org never counts.
func TestGlobalLayerAcrossTenants(t *testing.T) {
	onBothGlobal(t, func(t *testing.T, g *gatewaytest.Gateway) {
		newcomer := tenantSession(t, g, "newcomer")
		for i, org := range []string{"quiet", "first", "second"} {
			s := tenantSession(t, g, org)
			for j := range 3 {
				runOK(t, s, parseThenHash(10*i+j))
			}
		}
		g.Service.Learner().Wait()
		if got := liftedAfter(t, newcomer, "json:parse"); got != nil {
			t.Fatalf("two orgs (and one opted out) share json:parse → crypto:sha256; the newcomer is lifted %v", got)
		}
		// json:parse declares no result type (every other built-in does):
		// its calls type it.
		if d := discover(t, newcomer, wire.DiscoverRequest{Name: "json:parse"}); d.Tools[0].OutputInferred {
			t.Fatalf("two orgs' types shown: %+v", d.Tools[0])
		}
		runOK(t, tenantSession(t, g, "third"), parseThenHash(99))
		g.Service.Learner().Wait()
		if got := liftedAfter(t, newcomer, "json:parse"); len(got) != 1 || got[0].Tool != "crypto:sha256" {
			t.Fatalf("three orgs share json:parse → crypto:sha256; the newcomer is lifted %v", got)
		}
		// The query finds json:parse; the graph lifts crypto:sha256 into
		// the answer, which BM25 alone does not give it.
		hits := discover(t, newcomer, wire.DiscoverRequest{Query: "parse json", Limit: 5}).Tools
		if !slices.ContainsFunc(hits, func(d wire.DiscoveredTool) bool { return d.ID == "crypto:sha256" }) {
			t.Fatalf("the newcomer's top 5 for \"parse json\": %v", ids(hits))
		}
		d := discover(t, newcomer, wire.DiscoverRequest{Name: "json:parse"}).Tools[0]
		if !d.OutputInferred || !strings.HasSuffix(d.Declaration, "Promise<{ v?: string }>"+tools.InferredNote) {
			t.Fatalf("json:parse for the newcomer: %+v", d)
		}
	})
}

func onBothGlobal(t *testing.T, f func(t *testing.T, g *gatewaytest.Gateway)) {
	cfg := gateway.FileConfig{Global: &gateway.GlobalLayer{OptOut: []string{"quiet"}}}
	t.Run("sqlite", func(t *testing.T) { f(t, gatewaytest.Start(t, gateway.Options{Config: cfg})) })
	t.Run("postgres", func(t *testing.T) { f(t, gatewaytest.Start(t, gateway.Options{DB: pgtest.Start(t), Config: cfg})) })
}

func ids(list []wire.DiscoveredTool) []string {
	var out []string
	for _, d := range list {
		out = append(out, d.ID)
	}
	return out
}

// A hosted server's tool that declares no output schema is typed from the
// tenant's first successful call, marked inferred; one that declares a
// schema keeps it. Another tenant sees neither tenant's inferred type.
func TestUpstreamToolTypedAfterOneCall(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{Config: gateway.FileConfig{Servers: map[string]gateway.ServerEntry{
		"fx": {ServerConfig: upstream.ServerConfig{Command: testfixture.BuildServer(t)}, Hosted: true},
	}}})
	s := g.Connect(t, g.Key, false)
	before := discover(t, s, wire.DiscoverRequest{Name: "fx:json"}).Tools[0]
	if before.OutputInferred || !strings.HasSuffix(before.Declaration, "Promise<unknown>") {
		t.Fatalf("fx:json before any call: %+v", before)
	}
	runOK(t, s, `return await mcp.fx.json({})`)
	runOK(t, s, `return await mcp.fx.add({a: 1, b: 2})`)
	g.Service.Learner().Wait()
	after := discover(t, s, wire.DiscoverRequest{Name: "fx:json"}).Tools[0]
	if !after.OutputInferred || !strings.HasSuffix(after.Declaration, "Promise<{ items?: string[]; n?: number; ok?: boolean }>"+tools.InferredNote) {
		t.Fatalf("fx:json after one call: %+v", after)
	}
	if add := discover(t, s, wire.DiscoverRequest{Name: "fx:add"}).Tools[0]; add.OutputInferred {
		t.Fatalf("fx:add declares its schema: %+v", add)
	}
	other := tenantSession(t, g, "globex")
	if d := discover(t, other, wire.DiscoverRequest{Name: "fx:json"}).Tools[0]; d.OutputInferred {
		t.Fatalf("another tenant sees acme's inferred type: %+v", d)
	}
}

func TestGlobalLayerConfig(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		`{"global": {"k": 1}}`:                  `global: k 1: want 0 (off) or at least 2`,
		`{"global": {"k": -2}}`:                 `global: k -2`,
		`{"global": {"opt_out": ["a/b/c"]}}`:    `global: opt_out "a/b/c"`,
		`{"global": {"opt_out": ["/web"]}}`:     `global: opt_out "/web"`,
		`{"global": {"opt_out": ["acme/"]}}`:    `global: opt_out "acme/"`,
		`{"global": {"optout": ["acme"]}}`:      `unknown key "global.optout" (did you mean "opt_out"?)`,
		`{"global": {"k": 5, "opt_out": [""]}}`: `global: opt_out ""`,
	} {
		testfixture.WriteFile(t, dir, "gateway.json", body)
		_, err := gateway.LoadConfig(filepath.Join(dir, "gateway.json"))
		var pe *pmlerr.Error
		if !errors.As(err, &pe) || pe.Code != pmlerr.InvalidConfig || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want INVALID_CONFIG with %q", body, err, want)
		}
	}
	testfixture.WriteFile(t, dir, "gateway.json", `{"global": {"k": 0, "opt_out": ["acme", "globex/web"]}}`)
	cfg, err := gateway.LoadConfig(filepath.Join(dir, "gateway.json"))
	if err != nil || *cfg.Global.K != 0 || len(cfg.Global.OptOut) != 2 {
		t.Fatalf("valid config: %+v, %v", cfg.Global, err)
	}
	one := 1
	if _, _, err := gateway.Open(t.Context(), gateway.Options{DB: filepath.Join(dir, "gw.db"), Config: gateway.FileConfig{Global: &gateway.GlobalLayer{K: &one}}}); pmlerr.CodeOf(err, "") != pmlerr.InvalidConfig {
		t.Fatalf("Open with k 1: %v", err)
	}
}
