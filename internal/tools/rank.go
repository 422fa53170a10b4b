package tools

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
)

// BM25 parameters, and the weight of a term found in a tool's id relative to
// one found in its description: an id says what a tool is, a description
// mentions many things.
const (
	bm25K1       = 1.2
	bm25B        = 0.75
	idWeight     = 3.0
	prefixWeight = 0.5 // a query term that is a prefix of a tool term ("hash" ~ "hashing")

	exactIDBoost    = 1000.0
	namespaceBoost  = 100.0
	minPrefixLength = 3
)

// Rank orders infos by relevance to query: an exact id match first, then the
// tools of a namespace the query names, then BM25 over tokens of the id
// (weighted) and description. It returns at most limit tools (0: every tool
// with a positive score). An empty query returns all tools sorted by id.
func Rank(query string, infos []Info, limit int) []Info {
	q := strings.TrimSpace(strings.ToLower(query))
	if q == "" {
		out := slices.Clone(infos)
		slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.ID, b.ID) })
		return truncate(out, limit)
	}
	terms := slices.Compact(slices.Sorted(slices.Values(tokenize(query))))

	docs := make([]rankDoc, len(infos))
	var totalLen float64
	df := map[string]int{}
	for i, info := range infos {
		d := newRankDoc(info)
		docs[i] = d
		totalLen += d.length
		for t := range d.tf {
			df[t]++
		}
	}
	avgLen := totalLen / float64(max(len(docs), 1))
	n := float64(len(docs))

	type scored struct {
		info  Info
		score float64
	}
	var hits []scored
	for i, d := range docs {
		var score float64
		for _, qt := range terms {
			tf, matched := d.termFreq(qt)
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[matched])+0.5)/(float64(df[matched])+0.5))
			score += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*d.length/avgLen))
		}
		id := strings.ToLower(infos[i].ID)
		switch {
		case id == q:
			score += exactIDBoost
		case strings.ToLower(infos[i].Namespace()) == q:
			score += namespaceBoost
		}
		if score > 0 {
			hits = append(hits, scored{infos[i], score})
		}
	}
	slices.SortFunc(hits, func(a, b scored) int {
		return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.info.ID, b.info.ID))
	})
	out := make([]Info, len(hits))
	for i, h := range hits {
		out[i] = h.info
	}
	return truncate(out, limit)
}

func truncate(infos []Info, limit int) []Info {
	if limit > 0 && len(infos) > limit {
		return infos[:limit]
	}
	return infos
}

// rankDoc is one tool's weighted term frequencies.
type rankDoc struct {
	tf     map[string]float64
	length float64
}

func newRankDoc(info Info) rankDoc {
	d := rankDoc{tf: map[string]float64{}}
	for _, t := range tokenize(info.ID) {
		d.tf[t] += idWeight
		d.length += idWeight
	}
	for _, t := range tokenize(info.Description) {
		d.tf[t]++
		d.length++
	}
	return d
}

// termFreq returns the weighted frequency of query term qt in d and the
// document term that matched it: exact, else the most frequent term qt is a
// prefix of, at a discount.
func (d rankDoc) termFreq(qt string) (float64, string) {
	if tf, ok := d.tf[qt]; ok {
		return tf, qt
	}
	if len(qt) < minPrefixLength {
		return 0, ""
	}
	var best float64
	var match string
	for t, tf := range d.tf {
		if strings.HasPrefix(t, qt) && (tf > best || tf == best && t < match) {
			best, match = tf, t
		}
	}
	return best * prefixWeight, match
}

// tokenize splits text into lower-case, lightly stemmed terms on
// non-alphanumerics and camelCase boundaries ("readFile" -> read, file).
func tokenize(text string) []string {
	var terms []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			terms = append(terms, stem(strings.ToLower(string(cur))))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return terms
}

// stem strips common English plural and verb endings so "files" matches
// "file" and "parses" matches "parse". It is deliberately crude: both sides
// of a comparison go through it.
func stem(t string) string {
	switch {
	case len(t) > 4 && strings.HasSuffix(t, "ies"):
		return t[:len(t)-3] + "y"
	case len(t) > 5 && strings.HasSuffix(t, "ing"):
		return t[:len(t)-3]
	case len(t) > 4 && strings.HasSuffix(t, "ed"):
		return t[:len(t)-2]
	case len(t) > 3 && strings.HasSuffix(t, "s") && !strings.HasSuffix(t, "ss") && !strings.HasSuffix(t, "us") && !strings.HasSuffix(t, "is"):
		return t[:len(t)-1]
	}
	return t
}
