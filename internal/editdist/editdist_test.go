package editdist_test

import (
	"testing"

	"github.com/pml-go/pml/internal/editdist"
)

func TestLevenshtein(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"parse", "parce", 1}, {"héllo", "hello", 1}} {
		if got := editdist.Levenshtein(c.a, c.b); got != c.d {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
