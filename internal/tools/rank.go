package tools

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/kljensen/snowball/english"
)

// BM25 parameters, and the weight of a term found in a tool's action name
// relative to one found in its description: a name says what a tool is, a
// description mentions many things.
const (
	bm25K1       = 1.2
	bm25B        = 0.75
	idWeight     = 3.0
	prefixWeight = 0.5 // a query term that is a prefix of a tool term ("hash" ~ "hashing")
	// synonymWeight discounts a term the query did not use but means
	// (see synonyms): a tool using the query's own words ranks first.
	synonymWeight = 0.6

	// learnedWeight is what a word runs taught of a tool counts, one in its
	// description counting 1.
	learnedWeight = 2.0

	exactIDBoost    = 1000.0
	namespaceBoost  = 100.0
	minPrefixLength = 3
)

// Server context (docs/how-it-works.md "Discover and the tool graph"): a
// server's namespace, what it says of itself in initialize (Info.Server)
// and all its tools' words are one more document per server, scored like
// a tool's among the servers; its score, weighted, counts for each of its
// tools, less for a tool that matches none of the query itself, so the
// words of a server's name and purpose find its tools without filling the
// top hits with every one of them. A query that names a server ("in
// Discord") counts its tools' own scores namedWeight more.
const (
	serverWeight = 0.5
	// orphanShare is the part of its server's score a tool that matches
	// nothing of the query takes.
	orphanShare = 0.25
	// sharedShare: a word in the action names of at least this part of a
	// server's tools names the server, not what a tool does.
	sharedShare = 0.5
	namedWeight = 1.0
	// taskNamedWeight is namedWeight for a need that names no server of
	// its own, for those its task names.
	taskNamedWeight = 0.5
	// maxNamedBy: a word that more servers' namespaces share names none.
	maxNamedBy = 2
	// nameWeight is how much more a tool scores whose action name the
	// query says all of ("write_file" for "save it to notes.md": write
	// through a synonym, file through the file name): a name says what a
	// tool does, and a generic need ("read the file", "save the report")
	// is found by it though its words are in most descriptions, where
	// BM25 counts them little.
	nameWeight = 2.0
)

// Bounds on the work of one ranking, whatever the query: its first
// maxQueryBytes, at most MaxNeeds needs of at most maxNeedTerms terms, at
// most maxTerms distinct terms in all.
const (
	maxQueryBytes = 4096
	// MaxNeeds bounds the needs of one ranking.
	MaxNeeds     = 8
	maxNeedTerms = 64
	maxTerms     = 256
)

// Rank orders infos by relevance to query: an exact id match first, then the
// tools of a namespace the query names, then BM25 over the stemmed words of
// the action name (weighted) and description, for the query's words less
// stop words plus their synonyms (at a discount), with each tool's server
// context. It returns at most limit tools (0: every tool with a positive
// score). An empty query returns all tools sorted by id.
func Rank(query string, infos []Info, limit int) []Info {
	hits := Score(query, infos)
	out := make([]Info, len(hits))
	for i, h := range hits {
		out[i] = h.Info
	}
	return truncate(out, limit)
}

// Scored is a tool and its relevance to a query: Score with the words runs
// taught it (Info.Learned), Direct by what the tool says of itself alone.
type Scored struct {
	Info   Info
	Score  float64
	Direct float64
}

// Score is Rank with each hit's score, every hit with a positive one, best
// first. An empty query scores every tool 0, sorted by id.
func Score(query string, infos []Info) []Scored {
	if strings.TrimSpace(query) == "" {
		out := make([]Scored, len(infos))
		for i, info := range infos {
			out[i] = Scored{Info: info}
		}
		slices.SortFunc(out, func(a, b Scored) int { return strings.Compare(a.Info.ID, b.Info.ID) })
		return out
	}
	return ScoreEach([]string{query}, infos)[0]
}

// ScoreEach scores infos against each query at once (one pass over the
// tools' text for all of them): out[i] is Score(queries[i]) but for an
// empty query, which finds nothing. Past 2*MaxNeeds queries, the rest
// find nothing.
func ScoreEach(queries []string, infos []Info) [][]Scored {
	return scoreAll(queries, infos, false)
}

// ScoreTask scores infos against a task and each of its needs at once:
// whole is the task's hits, each[i] needs[i]'s. A need that names no
// server counts the servers the task names ("…in Discord, and add a
// reaction to it") at taskNamedWeight.
func ScoreTask(task string, needs []string, infos []Info) (whole []Scored, each [][]Scored) {
	out := scoreAll(append([]string{task}, needs...), infos, true)
	return out[0], out[1:]
}

func scoreAll(queries []string, infos []Info, task bool) [][]Scored {
	out := make([][]Scored, len(queries))
	var qs []rankQuery
	var idx []int
	terms := termSet{index: map[string]int{}}
	for i, q := range queries {
		if i >= 2*MaxNeeds {
			break
		}
		q = clip(q, maxQueryBytes)
		qt := terms.add(q)
		if len(qt) == 0 {
			continue
		}
		qs = append(qs, rankQuery{text: strings.ToLower(strings.TrimSpace(q)), terms: qt})
		idx = append(idx, i)
	}
	if len(qs) == 0 {
		return out
	}
	c := newCorpus(infos, terms.list)
	var taskNamed map[*serverDoc]bool
	if task && idx[0] == 0 {
		taskNamed = c.named(qs[0])
	}
	for k, q := range qs {
		named, weight := c.named(q), namedWeight
		if len(named) == 0 && idx[k] > 0 {
			named, weight = taskNamed, taskNamedWeight
		}
		out[idx[k]] = c.score(q, named, weight)
	}
	return out
}

// rankQuery is one query's terms: an index into the corpus' term list and a
// weight each.
type rankQuery struct {
	text  string
	terms []queryTerm
}

type queryTerm struct {
	j      int
	weight float64
	source uint64 // the query's words it stands for, one bit each
}

// termSet is the distinct terms of a set of queries.
type termSet struct {
	list  []string
	index map[string]int
}

// add adds q's terms (queryTerms) and returns them as q's.
func (s *termSet) add(q string) []queryTerm {
	words, weights, sources := queryTerms(q)
	var out []queryTerm
	for i, w := range words {
		j, ok := s.index[w]
		if !ok {
			if len(s.list) >= maxTerms {
				continue
			}
			j = len(s.list)
			s.index[w] = j
			s.list = append(s.list, w)
		}
		out = append(out, queryTerm{j, weights[i], sources[i]})
	}
	return out
}

// corpus is the tools' and their servers' weighted frequencies of a set of
// terms.
type corpus struct {
	m       *matcher
	infos   []Info
	docs    []rankDoc
	df      []float64
	avgLen  float64
	servers map[string]*serverDoc
	sdf     []float64 // servers whose document holds each term
	nsdf    []float64 // servers whose namespace holds each term
	sAvgLen float64
}

// serverDoc is one server's context: the terms of its namespace
// (weighted like an action name), of what it says of itself, and of all
// its tools, as one document; and the words of its tools' action names.
type serverDoc struct {
	tf     []float64
	ns     []float64 // each term in the namespace alone
	length float64
	tools  int
	names  map[string]int // tools of the server with each word in their action name
}

func newCorpus(infos []Info, terms []string) *corpus {
	c := &corpus{infos: infos, docs: make([]rankDoc, len(infos)), df: make([]float64, len(terms)), servers: map[string]*serverDoc{}}
	m := newMatcher(terms)
	c.m = m
	var total float64
	for i, info := range infos {
		d := newRankDoc(info, m)
		c.docs[i] = d
		total += d.length
		ns := info.Namespace()
		s := c.servers[ns]
		if s == nil {
			s = &serverDoc{tf: make([]float64, len(terms)), ns: make([]float64, len(terms)), names: map[string]int{}}
			var nsLen float64
			m.count(ns, 1, s.ns, &nsLen)
			m.count(ns, idWeight, s.tf, &s.length)
			m.count(info.Server, 1, s.tf, &s.length)
			c.servers[ns] = s
		}
		s.tools++
		s.length += d.length
		for _, w := range d.name {
			s.names[w]++
		}
		for j, tf := range d.tf {
			if tf > 0 {
				c.df[j]++
				s.tf[j] += tf
			}
		}
	}
	c.avgLen = total / float64(max(len(infos), 1))
	c.sdf = make([]float64, len(terms))
	c.nsdf = make([]float64, len(terms))
	var sTotal float64
	for _, s := range c.servers {
		for j := range terms {
			if s.tf[j] > 0 {
				c.sdf[j]++
			}
			if s.ns[j] > 0 {
				c.nsdf[j]++
			}
		}
		sTotal += s.length
	}
	c.sAvgLen = sTotal / float64(max(len(c.servers), 1))
	return c
}

// named are the servers q names: one of q's own words (not a synonym's)
// is a word of the server's namespace that at most maxNamedBy servers'
// namespaces share ("discord", "gitlab"; not a word most names have).
func (c *corpus) named(q rankQuery) map[*serverDoc]bool {
	var out map[*serverDoc]bool
	for _, s := range c.servers {
		for _, t := range q.terms {
			if t.weight >= 1 && s.ns[t.j] > 0 && c.nsdf[t.j] <= maxNamedBy {
				if out == nil {
					out = map[*serverDoc]bool{}
				}
				out[s] = true
				break
			}
		}
	}
	return out
}

// bm25 is one document's score for q.
func bm25(q rankQuery, tf []float64, length, avgLen float64, df []float64, n float64) float64 {
	var score float64
	for _, t := range q.terms {
		f := tf[t.j]
		if f == 0 {
			continue
		}
		idf := math.Log(1 + (n-df[t.j]+0.5)/(df[t.j]+0.5))
		score += t.weight * idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*length/max(avgLen, 1)))
	}
	return score
}

// score ranks the corpus for q: each tool's BM25, plus its server's.
func (c *corpus) score(q rankQuery, named map[*serverDoc]bool, namedWeight float64) []Scored {
	n, ns := float64(len(c.docs)), float64(len(c.servers))
	serverScore := make(map[string]float64, len(c.servers))
	for name, s := range c.servers {
		serverScore[name] = bm25(q, s.tf, s.length, c.sAvgLen, c.sdf, ns)
	}
	var hits []Scored
	for i, d := range c.docs {
		info := c.infos[i]
		mult := 1.0
		if cov := c.nameCoverage(q, d, c.servers[info.Namespace()]); cov > 0 {
			mult *= 1 + nameWeight*cov
		}
		if named[c.servers[info.Namespace()]] {
			mult *= 1 + namedWeight
		}
		ctx := serverWeight * serverScore[info.Namespace()]
		var exact float64
		switch {
		case strings.ToLower(info.ID) == q.text:
			exact = exactIDBoost
		case strings.ToLower(info.Namespace()) == q.text:
			exact = namespaceBoost
		}
		withCtx := func(bm float64) float64 {
			if bm == 0 {
				return ctx*orphanShare + exact
			}
			return bm*mult + ctx + exact
		}
		score := withCtx(bm25(q, d.tf, d.length, c.avgLen, c.df, n))
		direct := score
		if d.learned {
			plain := d.plain
			if plain == nil {
				plain = d.tf
			}
			direct = withCtx(bm25(q, plain, d.plainLength, c.avgLen, c.df, n))
		}
		if score > 0 {
			hits = append(hits, Scored{info, score, direct})
		}
	}
	SortScored(hits)
	return hits
}

// nameCoverage is the share of the words of d's action name that q
// matches, less the words most of its server's tool names share
// ("kubectl_", "browser_"), which name the server, not what the tool does.
func (c *corpus) nameCoverage(q rankQuery, d rankDoc, s *serverDoc) float64 {
	var words, matched float64
	var said, all uint64
	for _, t := range q.terms {
		all |= t.source
	}
	for _, w := range d.name {
		if s != nil && s.tools >= 3 && float64(s.names[w]) >= sharedShare*float64(s.tools) {
			continue
		}
		words++
		best := 0.0
		for _, mt := range c.m.matches(w) {
			for _, t := range q.terms {
				if t.j == mt.j {
					best = max(best, t.weight*mt.weight)
					said |= t.source
				}
			}
		}
		matched += best
	}
	if words == 0 || all == 0 {
		return 0
	}
	return matched / words * float64(bits.OnesCount64(said)) / float64(bits.OnesCount64(all))
}

// SortScored orders hits best first, then by id.
func SortScored(hits []Scored) {
	slices.SortFunc(hits, func(a, b Scored) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.Info.ID, b.Info.ID))
	})
}

func truncate(infos []Info, limit int) []Info {
	if limit > 0 && len(infos) > limit {
		return infos[:limit]
	}
	return infos
}

// rankDoc is one tool's weighted frequency of each term, and its weighted
// length; and the words of its action name, for nameCoverage.
type rankDoc struct {
	tf     []float64
	length float64
	name   []string
	// learned says the tool has learned words; plain and plainLength are
	// then tf and length without them (plain nil: none matched a term,
	// and tf is plain).
	learned     bool
	plain       []float64
	plainLength float64
}

// newRankDoc counts the terms in info's action name (weighted),
// description and learned words (document expansion from use); its
// namespace counts with its server (serverDoc).
func newRankDoc(info Info, m *matcher) rankDoc {
	d := rankDoc{tf: make([]float64, len(m.terms))}
	_, action := Split(info.ID)
	m.count(action, idWeight, d.tf, &d.length)
	m.count(info.Description, 1, d.tf, &d.length)
	if info.Learned != "" {
		d.learned, d.plainLength = true, d.length
		// Few learned words match a query's terms: tf is copied only
		// when one does.
		eachWord(info.Learned, func(w string) {
			d.length += learnedWeight
			for _, mt := range m.matches(w) {
				if d.plain == nil {
					d.plain = slices.Clone(d.tf)
				}
				d.tf[mt.j] += learnedWeight * mt.weight
			}
		})
	}
	eachWord(action, func(w string) {
		if !slices.Contains(d.name, w) {
			d.name = append(d.name, w)
		}
	})
	return d
}

// matcher counts a set of terms in texts: an exact match of a word's stem
// counts fully, a stem that a term of at least minPrefixLength is a prefix
// of ("hash" in "hashes") at prefixWeight. What a word matches is
// memoized: tools share most words, and stemming is the costly part of
// ranking.
type matcher struct {
	terms []string
	seen  map[string][]match
}

type match struct {
	j      int
	weight float64
}

func newMatcher(terms []string) *matcher {
	return &matcher{terms: terms, seen: map[string][]match{}}
}

// count adds each term's weighted frequency in text to tf, and the text's
// weighted length to length.
func (m *matcher) count(text string, weight float64, tf []float64, length *float64) {
	eachWord(text, func(w string) {
		*length += weight
		for _, mt := range m.matches(w) {
			tf[mt.j] += weight * mt.weight
		}
	})
}

func (m *matcher) matches(w string) []match {
	if got, ok := m.seen[w]; ok {
		return got
	}
	var out []match
	if mayStemTo(w, m.terms) {
		t := stem(w)
		for j, qt := range m.terms {
			switch {
			case t == qt:
				out = append(out, match{j, 1})
			case len(qt) >= minPrefixLength && strings.HasPrefix(t, qt):
				out = append(out, match{j, prefixWeight})
			}
		}
	}
	m.seen[w] = out
	return out
}

// mayStemTo reports whether word's stem may equal or extend one of terms:
// a Porter2 stem is a prefix of its word but for a final "y" turned "i"
// (and a few irregular words, left unmatched), so a word that does not
// start with a term less its last letter cannot match it.
func mayStemTo(word string, terms []string) bool {
	for _, t := range terms {
		if strings.HasPrefix(word, t[:len(t)-1]) {
			return true
		}
	}
	return false
}

// tokenize splits text into lower-case, stemmed terms (eachWord, stem).
func tokenize(text string) []string {
	var terms []string
	eachToken(text, func(t string) { terms = append(terms, t) })
	return terms
}

// eachToken calls fn with each term of text, as tokenize splits it, without
// building a slice.
func eachToken(text string, fn func(string)) {
	eachWord(text, func(w string) { fn(stem(w)) })
}

// stem reduces a lower-case word to its English (Porter2) stem, so
// "committed" matches "commit" and "directories" matches "directory". A
// word of another script is its own stem.
func stem(t string) string {
	for i := 0; i < len(t); i++ {
		if t[i] >= 0x80 {
			return t
		}
	}
	return english.Stem(t, true)
}

// clip cuts s to at most n bytes, at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// queryTerms are the distinct terms of query, without stop words unless the
// query has nothing else, each with its weight: 1 for the query's own
// terms, synonymWeight for those synonyms and the words a file name or URL
// stands for (queryWords) add. At most maxNeedTerms, the query's own first.
func queryTerms(q string) (terms []string, weights []float64, sources []uint64) {
	own, implied := queryWords(q)
	weight := map[string]float64{}
	source := map[string]uint64{}
	var order []string
	// Each word of the query is one source; a term stands for the sources
	// it comes from (a synonym for the word it means).
	bits := map[string]uint64{}
	bitOf := func(w string) uint64 {
		b, ok := bits[w]
		if !ok && len(bits) < 64 {
			b = 1 << len(bits)
			bits[w] = b
		}
		return b
	}
	put := func(t string, w float64, src uint64) {
		if len(t) < 2 {
			return // a single letter says nothing of a tool
		}
		if old, ok := weight[t]; !ok {
			if len(order) >= maxNeedTerms {
				return
			}
			order = append(order, t)
		} else if old >= w {
			source[t] |= src
			return
		}
		weight[t] = w
		source[t] |= src
	}
	for _, w := range own {
		st := stem(w)
		put(st, 1, bitOf(st))
	}
	for _, w := range implied {
		st := stem(w)
		put(st, synonymWeight, bitOf(st))
	}
	for _, w := range own {
		st := stem(w)
		for _, syn := range synonymsByStem[st] {
			eachToken(syn, func(t string) { put(t, synonymWeight, bitOf(st)) })
		}
	}
	weights = make([]float64, len(order))
	sources = make([]uint64, len(order))
	for j, t := range order {
		weights[j], sources[j] = weight[t], source[t]
	}
	return order, weights, sources
}

// maxFamilyTerms bounds Terms.
const maxFamilyTerms = 32

// Terms are the distinct stems of query's words less stop words, and of
// the words its file names and URLs imply, sorted: what the query says,
// for telling queries of one family apart.
func Terms(query string) []string {
	own, implied := queryWords(clip(query, maxQueryBytes))
	var out []string
	for _, w := range append(own, implied...) {
		if t := stem(w); len(t) >= 2 && !slices.Contains(out, t) && len(out) < maxFamilyTerms {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// queryWords are the words of q less stop words (all of them when it has
// nothing else), and the words its file names and URLs imply.
func queryWords(q string) (own, implied []string) {
	var all []string
	for _, field := range strings.Fields(q) {
		words, imp := fieldWords(field)
		implied = append(implied, imp...)
		for _, w := range words {
			all = append(all, w)
			if !isStopWord(w) {
				own = append(own, w)
			}
		}
	}
	if len(own) == 0 && len(implied) == 0 {
		own = all
	}
	return own, implied
}

// isStopWord reports an English stop word ("the", "it", "to").
func isStopWord(w string) bool { return english.IsStopWord(w) || fillerWords[w] }

// fillerWords are words of a request's manners that the stemmer's stop
// words lack ("Could you: …", "… etc."): they name no tool, and a clause
// of them alone is no need (Needs).
var fillerWords = map[string]bool{"could": true, "would": true, "should": true, "might": true, "must": true,
	"shall": true, "etc": true, "please": true, "hey": true, "hi": true, "hello": true, "thanks": true,
	"thank": true, "really": true}

// Coverage is the share of what query says (its own words, stop words
// aside) that text says too, directly, through a synonym or by a prefix: how
// much of a request a text speaks of. 0 for a query of no words.
func Coverage(query, text string) float64 {
	words, _, sources := queryTerms(clip(query, maxQueryBytes))
	if len(words) == 0 {
		return 0
	}
	m := newMatcher(words)
	tf := make([]float64, len(words))
	var length float64
	m.count(text, 1, tf, &length)
	var said, all uint64
	for j, src := range sources {
		all |= src
		if tf[j] > 0 {
			said |= src
		}
	}
	if all == 0 {
		return 0
	}
	return float64(bits.OnesCount64(said)) / float64(bits.OnesCount64(all))
}
