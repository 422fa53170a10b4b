package tools

import (
	"cmp"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/editdist"
)

// Nearest returns up to n of candidates closest to id, best first, for "did
// you mean" messages. Closeness is the edit distance between the ids, lowered
// by a shared prefix and by a shared namespace; a candidate whose action equals
// id's action in another namespace ("fs:read_file" for "filesystem:read_file")
// or whose action contains id's action (or the reverse) counts as close. Far
// candidates outside id's namespace are left out rather than padding the list.
func Nearest(id string, candidates []string, n int) []string {
	if n <= 0 || id == "" {
		return nil
	}
	q := strings.ToLower(id)
	qns, qact := Split(q)
	type scored struct {
		id    string
		score float64
	}
	var hits []scored
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if lc == q {
			continue
		}
		cns, cact := Split(lc)
		score := float64(editdist.Levenshtein(q, lc))
		score -= 0.5 * float64(min(commonPrefix(q, lc), 4))
		sameNS := qns == cns
		if sameNS {
			score -= 1
		}
		related := false
		switch {
		case qact != "" && qact == cact:
			score = min(score, 1.5)
			related = true
		case qact != "" && cact != "" && (strings.Contains(cact, qact) || strings.Contains(qact, cact)):
			score = min(score, 2.5)
			related = true
		case qact == "" && strings.Contains(cns, qns):
			// A bare namespace ("files") suggests that namespace's tools.
			related = true
		}
		limit := max(2, float64(len(q))/3)
		if score > limit && !related && !sameNS {
			continue
		}
		hits = append(hits, scored{c, score})
	}
	slices.SortFunc(hits, func(a, b scored) int {
		return cmp.Or(cmp.Compare(a.score, b.score), strings.Compare(a.id, b.id))
	})
	out := make([]string, 0, min(n, len(hits)))
	for _, h := range hits[:min(n, len(hits))] {
		out = append(out, h.id)
	}
	return out
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
