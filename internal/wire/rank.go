package wire

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/tools"
)

// DefaultDiscoverLimit is how many hits a discover without a limit answers:
// the top 5 whose cost docs/performance.md "What the AI pays: tool context"
// measures (about 440 tokens, within the 1,000 of tools/list and one
// discover together); 20 took about 6 KB. Total still counts every match,
// so the AI client knows to ask for more.
const DefaultDiscoverLimit = 5

// RankTools filters all by req's name and pattern and ranks them by relevance
// to its query; meta supplies each hit's kind, routing and FQDN, graph the
// tenant's tool graph (nil: none). A search answers compact hits (a short
// description and tools.CompactDeclaration, no schemas): the AI client reads
// them on every turn. A lookup by name, or schemas: true, answers the tool
// in full (docs/protocol.md "Gateway MCP tools").
//
// Relevance is BM25 (tools.Score), then (docs/how-it-works.md "Discover and
// the tool graph"): a capability the query finds takes part of the score
// of its best tool besides its own, so it ranks above the tools it is made
// of, unless most of its recent runs failed; and each hit lifts the tools
// that usually follow it in the tenant's runs (Graph.Lift's rule). An
// undescribed capability (learned without an intent) ranks below every
// other hit unless the query matches its name.
func RankTools(all []tools.Info, req DiscoverRequest, meta func(id string) DiscoveredTool, graph map[string][]Neighbor, boost map[string]float64) DiscoverAnswer {
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
		limit = DefaultDiscoverLimit
	}
	type hit struct {
		info tools.Info
		d    DiscoveredTool
	}
	// Another org's capability (a qualified id) ranks after every hit of
	// the viewer's own, at most maxPerOwner of one owner, so no other
	// tenant's words can take the viewer's top hits (docs/security.md
	// "Tenants and names").
	var first, foreign, last []hit
	perOwner := map[string]int{}
	for _, s := range rankNeeds(req, filtered, meta, graph, boost) {
		h := hit{s.Info, meta(s.Info.ID)}
		switch {
		case isQualified(s.Info.ID) && req.Name == "":
			if perOwner[h.d.Owner]++; perOwner[h.d.Owner] <= maxPerOwner {
				foreign = append(foreign, h)
			}
		case h.d.Undescribed && !namedBy(req.Query, s.Info.ID):
			last = append(last, h)
		default:
			first = append(first, h)
		}
	}
	hits := slices.Concat(first, foreign, last)
	total := len(hits)
	if len(hits) > limit {
		hits = hits[:limit]
	}
	out := DiscoverAnswer{Tools: make([]DiscoveredTool, 0, len(hits)), Total: total}
	for _, h := range hits {
		d, t := h.d, h.info
		d.ID, d.Description, d.InputSchema, d.OutputSchema = t.ID, t.Description, t.InputSchema, t.OutputSchema
		d.OutputInferred = t.OutputInferred && len(t.OutputSchema) > 0
		d.ToolsUsed, d.SuccessRate = nil, nil // ranking inputs, not the AI's
		switch {
		case req.Schemas:
			d.Declaration = tools.Declaration(t)
			d.ToolsUsed, d.SuccessRate = h.d.ToolsUsed, h.d.SuccessRate // a package ranks again with them
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
		d.Learned = ""
		if req.Graph {
			d.Learned = t.Learned
		}
		out.Tools = append(out.Tools, d)
	}
	return out
}

// rankNeeds ranks all for req's query, or for each of its needs
// (tools.Needs, or req.Queries) with each need's share of the top hits:
// the needs take turns, each its best hit not yet taken, while that hit
// scores at least needTail of the need's best; the rest follow by their
// best share of a need's best. Each need's scores count wholeTask of the
// whole query's besides, so the task's topic words sort among the tools
// that do the need.
func rankNeeds(req DiscoverRequest, all []tools.Info, meta func(string) DiscoveredTool, graph map[string][]Neighbor, boost map[string]float64) []tools.Scored {
	var needs []string
	for _, q := range req.Queries {
		if q = strings.TrimSpace(q); q != "" {
			needs = append(needs, q)
		}
	}
	whole := req.Query
	switch {
	case len(needs) == 0:
		needs = tools.Needs(whole)
	case strings.TrimSpace(whole) == "":
		whole = strings.Join(needs, ". ")
	}
	if len(needs) <= 1 {
		hits := tools.Score(whole, all)
		return rerank(hits, all, meta, graph, boost, whole, newTaskView(whole, hits, meta))
	}
	if len(needs) > tools.MaxNeeds {
		needs = append(needs[:tools.MaxNeeds-1], strings.Join(needs[tools.MaxNeeds-1:], ". "))
	}
	wholeHits, lists := tools.ScoreTask(whole, needs, all)
	task := newTaskView(whole, wholeHits, meta)
	var ranked [][]tools.Scored
	for i, list := range lists {
		if len(list) == 0 {
			continue
		}
		for i := range list {
			list[i].Score += wholeTask * task.learned.score[list[i].Info.ID]
		}
		ranked = append(ranked, rerank(list, all, meta, graph, boost, needs[i], task))
	}
	ranked = append(ranked, rerank(wholeHits, all, meta, graph, boost, whole, task))
	return interleave(ranked[:len(ranked)-1], ranked)
}

// Need weights (rankNeeds).
const (
	wholeTask = 0.3
	needTail  = 0.5
)

// interleave merges the needs' ranked lists: turns while each need's
// next hit is strong enough, then every hit of all by its best share of
// its list's best score.
func interleave(needs, all [][]tools.Scored) []tools.Scored {
	taken := map[string]bool{}
	var out []tools.Scored
	pos := make([]int, len(needs))
	for more := true; more; {
		more = false
		for i, list := range needs {
			for pos[i] < len(list) && taken[list[pos[i]].Info.ID] {
				pos[i]++
			}
			if pos[i] == len(list) || list[pos[i]].Score < needTail*list[0].Score {
				continue
			}
			s := list[pos[i]]
			taken[s.Info.ID] = true
			out = append(out, s)
			more = true
		}
	}
	best := map[string]tools.Scored{}
	for _, list := range all {
		if len(list) == 0 || list[0].Score <= 0 {
			continue
		}
		for _, s := range list {
			if taken[s.Info.ID] {
				continue
			}
			share := s.Score / list[0].Score
			if b, ok := best[s.Info.ID]; !ok || share > b.Score {
				best[s.Info.ID] = tools.Scored{Info: s.Info, Score: share}
			}
		}
	}
	rest := make([]tools.Scored, 0, len(best))
	for _, s := range best {
		rest = append(rest, s)
	}
	tools.SortScored(rest)
	return append(out, rest...)
}

// Ranking weights (docs/how-it-works.md "Discover and the tool graph").
const (
	maxPerOwner      = 3    // hits of one other org's capabilities in one answer
	capabilityWeight = 1.5  // a capability's own score counts this much more than a tool's
	capabilityShare  = 0.5  // and it takes this part of its best tool's score
	failingWeight    = 0.25 // a capability most of whose recent runs failed keeps this part
	graphShare       = 0.3  // a hit passes this part of its score along the tool graph
	graphGivers      = 3    // the best hits that do
	// boostShare: a tool the tenant's runs learned for this query's family
	// (its boost, at most 1) gains this part of the best hit's score.
	boostShare = 0.5
)

// rerank applies the capability, learned and graph rules to BM25's scores
// for query (docs/how-it-works.md "Discover and the tool graph"):
//   - a capability counts its own score capabilityWeight more and takes
//     capabilityShare of its best tool's when it fits the task
//     (taskView.fit: its text and the task say much of each other and its
//     tools are what the task needs), or when it ran again for what it
//     was learned for (a habit) and fits half as well. One that fits less
//     ranks by its own words, scaled by its fit, below the crowdFree best
//     tools: a skill learned for another task, its long intent sharing a
//     few common words with the query and its tools including the one the
//     query needs, does not take the place of the tools this task needs;
//   - a tool the tenant's runs taught for query (boost: learned words, the
//     query's family) gains boostShare of the best hit's score;
//   - each of the best hits lifts the tools that usually follow it in runs
//     (the graph);
//   - what runs taught and the graph lift into the top hits, but never past
//     the strongest direct hit, which keeps first place.
func rerank(scored []tools.Scored, all []tools.Info, meta func(string) DiscoveredTool, graph map[string][]Neighbor, boost map[string]float64, query string, task taskView) []tools.Scored {
	if strings.TrimSpace(query) == "" {
		return scored
	}
	score := make(map[string]float64, len(scored))
	top := 0.0
	for _, s := range scored {
		score[s.Info.ID] = s.Score
		top = max(top, s.Score)
	}
	out := make([]tools.Scored, 0, len(scored))
	byID := make(map[string]int, len(scored))
	floor := toolFloor(scored, meta)
	for _, s := range scored {
		if d := meta(s.Info.ID); d.Kind == "capability" {
			best := 0.0
			for _, t := range d.ToolsUsed {
				best = max(best, score[t])
			}
			fit := task.fit(s.Info, d)
			if fit >= minFit || d.Repeated && fit >= minFit/2 {
				s.Score = s.Score*capabilityWeight + capabilityShare*best
			} else {
				s.Score = min(s.Score*fit, fit*floor) // below the top tools, by how little it fits
			}
			if d.SuccessRate != nil && *d.SuccessRate < 0.5 {
				s.Score *= failingWeight
			}
		}
		byID[s.Info.ID] = len(out)
		out = append(out, s)
	}
	add := func(gain map[string]float64) {
		for _, t := range all {
			g := gain[t.ID]
			if g <= 0 {
				continue
			}
			if i, ok := byID[t.ID]; ok {
				out[i].Score += g
			} else {
				byID[t.ID] = len(out)
				out = append(out, tools.Scored{Info: t, Score: g})
			}
		}
	}
	if len(boost) == 0 && len(graph) == 0 {
		tools.SortScored(out)
		return out
	}
	first, firstScore := "", 0.0
	for _, s := range out {
		if s.Score > firstScore || s.Score == firstScore && s.Info.ID < first {
			first, firstScore = s.Info.ID, s.Score
		}
	}
	if len(boost) > 0 {
		learned := make(map[string]float64, len(boost))
		for id, b := range boost {
			learned[id] = boostShare * max(top, 1) * min(b, 1)
		}
		add(learned)
	}
	if len(graph) > 0 {
		add(graphLift(score, graph))
	}
	for i := range out {
		if out[i].Info.ID != first && out[i].Score >= firstScore && firstScore > 0 {
			out[i].Score = firstScore * keepFirst // lifted into the top hits, not above the first
		}
	}
	tools.SortScored(out)
	return out
}

// taskView is the whole task as rerank judges a capability's fit by it:
// its text, and each tool's score for it with the words runs taught it
// (learned) and by what the tool says of itself alone (direct), with the
// scores a strong hit reaches in each. A skill that is no habit (run
// once, or once for each of several tasks) taught its tools the words of
// its intent: judged with them, its tools would be strong
// for any task worded like that intent, which is its text counted twice.
// A habit's runs are what taught its tools their words, and they count.
type taskView struct {
	text            string
	learned, direct toolScores
	// fits are the capabilities' fits found so far: a fit depends on the
	// task alone, and every need's ranking asks it again.
	fits map[string]float64
}

// toolScores are the tools' scores for a task, its best and the score of
// its crowdFree-th best tool.
type toolScores struct {
	score      map[string]float64
	top, floor float64
}

func newTaskView(text string, hits []tools.Scored, meta func(string) DiscoveredTool) taskView {
	direct := make([]tools.Scored, len(hits))
	for i, s := range hits {
		direct[i] = tools.Scored{Info: s.Info, Score: s.Direct}
	}
	return taskView{text: text, learned: newToolScores(hits, meta), direct: newToolScores(direct, meta), fits: map[string]float64{}}
}

func newToolScores(hits []tools.Scored, meta func(string) DiscoveredTool) toolScores {
	v := toolScores{score: make(map[string]float64, len(hits)), floor: toolFloor(hits, meta)}
	for _, s := range hits {
		v.score[s.Info.ID] = s.Score
		v.top = max(v.top, s.Score)
	}
	return v
}

// fit is how well capability c fits the task, 0 to 1: it fits when its
// text and the task say much of each other (skillCover) and its tools are
// what the task needs (on average toolsFit of the best hit's score), or
// when every one of its tools is a strong hit among the task's best tools
// (toolsStrong of the best hit's score, and among the crowdFree best: a
// query naming a server makes most of its tools strong). Its tools are
// judged by the whole task, not by one need, and for a skill that is no
// habit by what they say of themselves.
func (v taskView) fit(c tools.Info, d DiscoveredTool) float64 {
	if fit, ok := v.fits[c.ID]; ok {
		return fit
	}
	fit := v.fitOf(c, d)
	v.fits[c.ID] = fit
	return fit
}

// fitOf works out fit, which caches it.
func (v taskView) fitOf(c tools.Info, d DiscoveredTool) float64 {
	fit := min(1, skillCover(v.text, c, d.Repeated)/fitCover)
	ts := v.direct
	if d.Repeated {
		ts = v.learned
	}
	n := len(d.ToolsUsed)
	if n == 0 || ts.top <= 0 {
		return fit
	}
	sum, weakest := 0.0, math.Inf(1)
	for _, t := range d.ToolsUsed {
		sum += ts.score[t]
		weakest = min(weakest, ts.score[t])
	}
	if weakest >= max(toolsStrong*ts.top, ts.floor) {
		return 1
	}
	return fit * min(1, sum/float64(n)/ts.top/toolsFit)
}

// skillCover is how much a capability's text and the task say of each
// other. For a habit (DiscoveredTool.Repeated) it is the share of the
// task its text says. For another skill it is also at most the share of
// its intent the task says: learned for another task of the same server,
// it says part of this one ("GitLab", "merge") but does much this one does
// not ask ("delete the merged branches, clear my todos"), where a
// paraphrase of the task it was learned for says most of it both ways.
func skillCover(task string, c tools.Info, habit bool) float64 {
	cover := tools.Coverage(task, c.ID+" "+c.Description)
	if habit {
		return cover
	}
	intent := c.Description
	if intent == "" {
		intent = c.ID
	}
	return min(cover, tools.Coverage(intent, task))
}

// toolFloor is the score of the crowdFree-th best tool of scored (of the
// last, when fewer): a capability that does not fit the query ranks below
// it, so skills learned for other tasks leave the top hits to the tools
// this one needs.
func toolFloor(scored []tools.Scored, meta func(string) DiscoveredTool) float64 {
	var best []float64
	for _, s := range scored {
		if meta(s.Info.ID).Kind != "capability" {
			best = append(best, s.Score)
		}
	}
	if len(best) == 0 {
		return 0
	}
	slices.SortFunc(best, func(a, b float64) int { return cmp.Compare(b, a) })
	return best[min(len(best), crowdFree)-1]
}

// fitCover is the share of a query a capability's text must say to rank as
// a fit for it; keepFirst places a tool the graph lifted past the strongest
// direct hit just below it.
const (
	fitCover = 0.5
	toolsFit = 0.5
	// toolsStrong: a capability all of whose tools score this part of the
	// best hit's score, and are among the crowdFree best tools, fits,
	// whatever its words.
	toolsStrong = 0.5
	// minFit: a capability that fits less ranks by its own words alone,
	// scaled by its fit, below the crowdFree best tools.
	minFit    = 0.5
	keepFirst = 0.999
	// crowdFree is how many of the best tools a capability that does not
	// fit ranks below: the default discover's answer.
	crowdFree = DefaultDiscoverLimit
)

// graphLift passes part of the score of each of the graphGivers best hits
// to the tools that follow it (what accompanies the top hits, not what
// follows any tool a word of the query touched), weighted like Adamic-Adar
// by 1/log of the giver's out-degree (a tool followed by everything says
// little about any one) and by the edge's part of the giver's runs.
func graphLift(score map[string]float64, graph map[string][]Neighbor) map[string]float64 {
	lift := map[string]float64{}
	givers := make([]string, 0, len(score))
	for tool, s := range score {
		if s > 0 && len(graph[tool]) > 0 {
			givers = append(givers, tool)
		}
	}
	slices.SortFunc(givers, func(a, b string) int { return cmp.Or(cmp.Compare(score[b], score[a]), strings.Compare(a, b)) })
	for _, tool := range givers[:min(len(givers), graphGivers)] {
		s, next := score[tool], graph[tool]
		var total int64
		for _, nb := range next {
			total += nb.Count
		}
		if total <= 0 {
			continue
		}
		degree := 1 / math.Log(2+float64(len(next)))
		for _, nb := range next {
			lift[nb.Tool] += graphShare * s * degree * float64(nb.Count) / float64(total)
		}
	}
	return lift
}

// droppable keeps schema only when the declaration rendered from it says
// less than it does: a duplicate costs the AI client tokens for nothing.
func droppable(schema json.RawMessage) json.RawMessage {
	if tools.DeclarationCovers(schema) {
		return nil
	}
	return schema
}

// isQualified reports whether id names another org's capability:
// "org.project.ns:action" (a tool namespace never holds a dot).
func isQualified(id string) bool {
	ns, _ := tools.Split(id)
	return strings.Contains(ns, ".")
}

// namedBy reports whether query matches id by its name alone.
func namedBy(query, id string) bool {
	return query != "" && len(tools.Rank(query, []tools.Info{{ID: id}}, 1)) > 0
}
