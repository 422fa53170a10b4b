package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tools/std"
)

func toolHit(string) DiscoveredTool { return DiscoveredTool{Routing: "server"} }

// TestDiscoverLeavesOutCoveredSchemas: a search answers no schemas; a lookup
// by name leaves out a schema the declaration renders in full but keeps one
// with a constraint the declaration cannot carry; schemas: true keeps all.
func TestDiscoverLeavesOutCoveredSchemas(t *testing.T) {
	all := []tools.Info{
		{ID: "w:now", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"t":{"type":"number"}}}`)},
		{ID: "w:days", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":1}}}`),
			OutputSchema: json.RawMessage(`{"type":"array","items":{"type":"string","format":"date"}}`)},
	}
	byID := func(a DiscoverAnswer) map[string]DiscoveredTool {
		m := map[string]DiscoveredTool{}
		for _, d := range a.Tools {
			m[d.ID] = d
		}
		return m
	}
	compact := byID(RankTools(all, DiscoverRequest{}, toolHit, nil, nil))
	if d := compact["w:now"]; d.InputSchema != nil || d.OutputSchema != nil || d.Declaration != "mcp.w.now(args: { city: string }): Promise<{ t?: number }>" {
		t.Fatalf("covered schemas kept: %+v", d)
	}
	if d := compact["w:days"]; d.InputSchema != nil || d.OutputSchema != nil {
		t.Fatalf("a search answered schemas: %+v", d)
	}
	byName := byID(RankTools(all, DiscoverRequest{Name: "w:days"}, toolHit, nil, nil))
	if d := byName["w:days"]; d.InputSchema == nil || d.OutputSchema == nil {
		t.Fatalf("schemas saying more than the declaration dropped from a lookup by name: %+v", d)
	}
	full := byID(RankTools(all, DiscoverRequest{Schemas: true}, toolHit, nil, nil))
	for _, info := range all {
		if d := full[info.ID]; string(d.InputSchema) != string(info.InputSchema) || string(d.OutputSchema) != string(info.OutputSchema) {
			t.Fatalf("schemas: true dropped a schema: %+v", d)
		}
	}
}

// TestDiscoverAnswerSizeForBuiltins measures a discover answer listing every
// built-in tool, compact and with schemas (bytes/4 as tokens), and holds the
// compact one to at most three quarters of the full one.
func TestDiscoverAnswerSizeForBuiltins(t *testing.T) {
	all, err := std.New().Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	size := func(req DiscoverRequest) int {
		req.Limit = len(all)
		body, err := Marshal(RankTools(all, req, toolHit, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		return len(body)
	}
	compact, full := size(DiscoverRequest{}), size(DiscoverRequest{Schemas: true})
	t.Logf("%d built-in tools: compact %d bytes (~%d tokens), with schemas %d bytes (~%d tokens)",
		len(all), compact, compact/4, full, full/4)
	if compact*4 > full*3 {
		t.Fatalf("compact answer %d bytes, full %d: less than a quarter saved", compact, full)
	}
}

// Another org's capabilities never outrank the viewer's own tools for the
// same words, and one owner takes at most maxPerOwner hits, however its
// intents are written (issue 34 finding 7).
func TestOthersCapabilitiesRankAsOthers(t *testing.T) {
	all := []tools.Info{{ID: "filesystem:read_file", Description: "Read the complete contents of a file from the file system."}}
	meta := map[string]DiscoveredTool{}
	for i := range 5 {
		id := fmt.Sprintf("orga.proja.cap:read_file_v%d", i)
		all = append(all, tools.Info{ID: id, Description: "read file v read a file contents read a file read file"})
		meta[id] = DiscoveredTool{Kind: "capability", Owner: "orga/proja", Routing: "server"}
	}
	all = append(all, tools.Info{ID: "orgc.projc.cap:read", Description: "read a file"})
	meta["orgc.projc.cap:read"] = DiscoveredTool{Kind: "capability", Owner: "orgc/projc", Routing: "server"}
	hit := func(id string) DiscoveredTool {
		if d, ok := meta[id]; ok {
			return d
		}
		return DiscoveredTool{Routing: "client"}
	}
	got := RankTools(all, DiscoverRequest{Query: "read a file", Limit: 10}, hit, nil, nil)
	var ids []string
	owners := map[string]int{}
	for _, d := range got.Tools {
		ids = append(ids, d.ID)
		owners[d.Owner]++
	}
	if len(ids) == 0 || ids[0] != "filesystem:read_file" {
		t.Fatalf("the viewer's own tool is not first: %v", ids)
	}
	if owners["orga/proja"] != maxPerOwner || owners["orgc/projc"] != 1 {
		t.Fatalf("hits per owner: %v (%v)", owners, ids)
	}
	// A lookup by name still finds the one capability named.
	if byName := RankTools(all, DiscoverRequest{Name: "orga.proja.cap:read_file_v4"}, hit, nil, nil); len(byName.Tools) != 1 {
		t.Fatalf("lookup by name: %+v", byName.Tools)
	}
}

// A result type inferred from calls is marked in the hit and at the end of
// its declaration; a declared one is not.
func TestDiscoverMarksInferredOutput(t *testing.T) {
	all := []tools.Info{
		{ID: "m:add", OutputSchema: json.RawMessage(`{"type":"number"}`), OutputInferred: true},
		{ID: "m:sub", OutputSchema: json.RawMessage(`{"type":"number"}`)},
		{ID: "m:none", OutputInferred: true},
	}
	for _, req := range []DiscoverRequest{{}, {Name: "m:add"}, {Schemas: true}} {
		for _, d := range RankTools(all, req, toolHit, nil, nil).Tools {
			inferred := d.ID == "m:add"
			if d.OutputInferred != inferred || strings.HasSuffix(d.Declaration, tools.InferredNote) != inferred {
				t.Fatalf("%+v: %+v", req, d)
			}
			if inferred && !strings.HasSuffix(d.Declaration, "Promise<number>"+tools.InferredNote) {
				t.Fatalf("declaration %q", d.Declaration)
			}
		}
	}
}
