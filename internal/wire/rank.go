package wire

import "github.com/pml-go/pml/internal/tools"

// RankTools filters all by req's name and pattern and ranks them by relevance
// to its query; meta supplies each hit's kind, routing and FQDN.
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
	ranked := tools.Rank(req.Query, filtered, limit)
	out := DiscoverAnswer{Tools: []DiscoveredTool{}, Total: len(ranked)}
	for _, t := range ranked {
		d := meta(t.ID)
		d.ID, d.Description, d.InputSchema, d.Declaration = t.ID, t.Description, t.InputSchema, tools.Declaration(t)
		if d.Kind == "" {
			d.Kind = "tool"
		}
		out.Tools = append(out.Tools, d)
	}
	return out
}
