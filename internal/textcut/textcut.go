// Package textcut shortens text to a byte budget without splitting a
// UTF-8 sequence, so that a cut text stays valid wherever it is shown.
package textcut

import (
	"strings"
	"unicode/utf8"
)

// Prefix returns the longest prefix of s of at most n bytes that does not
// end inside a multi-byte character; n of zero or less gives "".
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Words returns a prefix of s of at most n bytes that ends at a word (before
// a space) when one ends in its second half, else at a character boundary.
func Words(s string, n int) string {
	if len(s) <= n {
		return s
	}
	p := Prefix(s, n)
	if i := strings.LastIndexAny(p, " \n\t"); i > n/2 {
		p = p[:i]
	}
	return strings.TrimRight(p, " \n\t")
}
