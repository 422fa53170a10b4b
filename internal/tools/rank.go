package tools

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// BM25 parameters, and the weight of a term found in a tool's id relative to
// one found in its description: an id says what a tool is, a description
// mentions many things.
const (
	bm25K1       = 1.2
	bm25B        = 0.75
	idWeight     = 3.0
	prefixWeight = 0.5 // a query term that is a prefix of a tool term ("hash" ~ "hashing")
	// synonymWeight discounts a term the query did not use but means
	// (see synonyms): a tool using the query's own words ranks first.
	synonymWeight = 0.6

	exactIDBoost    = 1000.0
	namespaceBoost  = 100.0
	minPrefixLength = 3
)

// Rank orders infos by relevance to query: an exact id match first, then the
// tools of a namespace the query names, then BM25 over the stemmed words of
// the id (weighted) and description, for the query's words less stop words
// plus their synonyms (at a discount). It returns at most limit tools (0:
// every tool with a positive score). An empty query returns all tools
// sorted by id.
func Rank(query string, infos []Info, limit int) []Info {
	hits := Score(query, infos)
	out := make([]Info, len(hits))
	for i, h := range hits {
		out[i] = h.Info
	}
	return truncate(out, limit)
}

// Scored is a tool and its relevance to a query.
type Scored struct {
	Info  Info
	Score float64
}

// Score is Rank with each hit's score, every hit with a positive one, best
// first. An empty query scores every tool 0, sorted by id.
func Score(query string, infos []Info) []Scored {
	q := strings.TrimSpace(strings.ToLower(query))
	if q == "" {
		out := make([]Scored, len(infos))
		for i, info := range infos {
			out[i] = Scored{Info: info}
		}
		slices.SortFunc(out, func(a, b Scored) int { return strings.Compare(a.Info.ID, b.Info.ID) })
		return out
	}
	terms, weights := queryTerms(query)
	// Only the query terms' frequencies matter, so each document is reduced
	// to one weighted frequency per query term: no per-document term maps.
	docs := make([]rankDoc, len(infos))
	df := make([]float64, len(terms))
	var totalLen float64
	stems := map[string]string{} // a word's stem, as tools share most words
	for i, info := range infos {
		docs[i] = newRankDoc(info, terms, stems)
		totalLen += docs[i].length
		for j, tf := range docs[i].tf {
			if tf > 0 {
				df[j]++
			}
		}
	}
	avgLen := totalLen / float64(max(len(docs), 1))
	n := float64(len(docs))

	var hits []Scored
	for i, d := range docs {
		var score float64
		for j, tf := range d.tf {
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (n-df[j]+0.5)/(df[j]+0.5))
			score += weights[j] * idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*d.length/avgLen))
		}
		id := strings.ToLower(infos[i].ID)
		switch {
		case id == q:
			score += exactIDBoost
		case strings.ToLower(infos[i].Namespace()) == q:
			score += namespaceBoost
		}
		if score > 0 {
			hits = append(hits, Scored{infos[i], score})
		}
	}
	SortScored(hits)
	return hits
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

// rankDoc is one tool's weighted frequency of each query term, and its
// weighted length.
type rankDoc struct {
	tf     []float64
	length float64
}

// newRankDoc counts terms in info: an exact match counts fully, a document
// term that a query term is a prefix of ("hash" in "hashes") at a discount.
// stems memoizes the stems of the words of one ranking.
func newRankDoc(info Info, terms []string, stems map[string]string) rankDoc {
	exact := make([]float64, len(terms))
	prefix := make([]float64, len(terms))
	var length float64
	count := func(text string, weight float64) {
		eachWord(text, func(w string) {
			length += weight
			if !mayStemTo(w, terms) {
				return // stemming is the costly part of ranking
			}
			t, ok := stems[w]
			if !ok {
				t = stem(w)
				stems[w] = t
			}
			for j, qt := range terms {
				switch {
				case t == qt:
					exact[j] += weight
				case len(qt) >= minPrefixLength && strings.HasPrefix(t, qt):
					prefix[j] += weight
				}
			}
		})
	}
	count(info.ID, idWeight)
	count(info.Description, 1)
	for j := range exact {
		if exact[j] == 0 {
			exact[j] = prefix[j] * prefixWeight
		}
	}
	return rankDoc{tf: exact, length: length}
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

// tokenize splits text into lower-case, stemmed terms on
// non-alphanumerics and camelCase boundaries ("readFile" -> read, file).
func tokenize(text string) []string {
	var terms []string
	eachToken(text, func(t string) { terms = append(terms, t) })
	return terms
}

// eachToken calls fn with each term of text, as tokenize splits it, without
// building a slice: ranking tokenizes every tool's description per query.
func eachToken(text string, fn func(string)) {
	eachWord(text, func(w string) { fn(stem(w)) })
}

// eachWord calls fn with each lower-case word of text, split on
// non-alphanumerics and camelCase boundaries.
func eachWord(text string, fn func(string)) {
	start := -1
	var prev rune
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case word && start >= 0 && unicode.IsUpper(r) && unicode.IsLower(prev):
			fn(strings.ToLower(text[start:i]))
			start = i
		case word && start < 0:
			start = i
		case !word && start >= 0:
			fn(strings.ToLower(text[start:i]))
			start = -1
		}
		prev = r
	}
	if start >= 0 {
		fn(strings.ToLower(text[start:]))
	}
}

// stem reduces a lower-case word to its English (Porter2) stem, so
// "committed" matches "commit" and "directories" matches "directory".
func stem(t string) string { return english.Stem(t, true) }

// queryTerms are the distinct terms of query, without stop words unless the
// query has nothing else, each with its weight: 1 for the query's own
// terms, synonymWeight for those synonyms adds.
func queryTerms(query string) (terms []string, weights []float64) {
	var words []string
	eachWord(query, func(w string) {
		if !english.IsStopWord(w) {
			words = append(words, w)
		}
	})
	if len(words) == 0 {
		eachWord(query, func(w string) { words = append(words, w) })
	}
	weight := map[string]float64{}
	for _, w := range words {
		weight[stem(w)] = 1
	}
	for _, w := range words {
		for _, syn := range synonymsByStem[stem(w)] {
			eachToken(syn, func(t string) {
				if weight[t] < synonymWeight {
					weight[t] = synonymWeight
				}
			})
		}
	}
	terms = slices.Sorted(maps.Keys(weight))
	weights = make([]float64, len(terms))
	for j, t := range terms {
		weights[j] = weight[t]
	}
	return terms, weights
}
