package wire

import (
	"encoding/json"

	"github.com/pml-go/pml/internal/tools"
)

// RankTools filters all by req's name and pattern and ranks them by relevance
// to its query; meta supplies each hit's kind, routing and FQDN. A search
// answers compact hits (a short description and tools.CompactDeclaration,
// no schemas): the AI client reads them on every turn. A lookup by name, or
// schemas: true, answers the tool in full (docs/protocol.md "Gateway MCP
// tools"). An
// undescribed capability (learned without an intent) ranks below every
// other hit unless the query matches its name: its only description is the
// list of tools it uses, which would otherwise outrank those tools.
func RankTools(all []tools.Info, req DiscoverRequest, meta func(id string) DiscoveredTool) DiscoverAnswer {
	var filtered []tools.Info
	for _, t := range all {
		switch {
		case req.Name != "" && t.ID != req.Name:
		case req.Pattern != "" && !tools.MatchPattern(req.Pattern, t.ID):
		default:
			filtered = append(filtered, t)
		}
	}
	limit := req.Limit
	if limit <= 0 {
		limit = 20
	}
	type hit struct {
		info tools.Info
		d    DiscoveredTool
	}
	var first, last []hit
	for _, t := range tools.Rank(req.Query, filtered, 0) {
		h := hit{t, meta(t.ID)}
		if h.d.Undescribed && !namedBy(req.Query, t.ID) {
			last = append(last, h)
		} else {
			first = append(first, h)
		}
	}
	hits := append(first, last...)
	if len(hits) > limit {
		hits = hits[:limit]
	}
	out := DiscoverAnswer{Tools: make([]DiscoveredTool, 0, len(hits)), Total: len(hits)}
	for _, h := range hits {
		d, t := h.d, h.info
		d.ID, d.Description, d.InputSchema, d.OutputSchema = t.ID, t.Description, t.InputSchema, t.OutputSchema
		switch {
		case req.Schemas:
			d.Declaration = tools.Declaration(t)
		case req.Name != "":
			d.Declaration = tools.Declaration(t)
			d.InputSchema = droppable(d.InputSchema)
			d.OutputSchema = droppable(d.OutputSchema)
		default:
			d.Description = tools.ShortDescription(t.Description)
			d.Declaration = tools.CompactDeclaration(t)
			d.InputSchema, d.OutputSchema = nil, nil
		}
		if d.Kind == "" {
			d.Kind = "tool"
		}
		out.Tools = append(out.Tools, d)
	}
	return out
}

// droppable keeps schema only when the declaration rendered from it says
// less than it does: a duplicate costs the AI client tokens for nothing.
func droppable(schema json.RawMessage) json.RawMessage {
	if tools.DeclarationCovers(schema) {
		return nil
	}
	return schema
}

// namedBy reports whether query matches id by its name alone.
func namedBy(query, id string) bool {
	return query != "" && len(tools.Rank(query, []tools.Info{{ID: id}}, 1)) > 0
}
