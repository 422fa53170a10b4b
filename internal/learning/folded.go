package learning

import "github.com/pml-go/pml/internal/analysis"

// FoldedSecret reports whether a string code builds from constants
// (analysis.Folded: "sk_live_" + "51H…", a join, String.fromCharCode…)
// holds a secret by hasSecret in one of its constant runs. Such code is
// not learned, and is not served if it was (docs/security.md "Tenants and
// names").
func FoldedSecret(folded []analysis.Folded, hasSecret func(string) bool) bool {
	for _, f := range folded {
		for _, p := range f.Parts {
			if hasSecret(p) {
				return true
			}
		}
	}
	return false
}
