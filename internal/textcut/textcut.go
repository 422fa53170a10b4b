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

// Printable is s without the characters that hide or reorder text when it
// is shown: C0 and C1 controls but newline and tab, the Unicode bidirectional
// overrides, embeddings, isolates and marks, zero-width characters and the
// byte order mark. What a capability's owner writes is shown to other
// projects' AI clients (docs/security.md "Tenants and names"), which must
// read it as it will be shown.
func Printable(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r >= 0x7f && r < 0xa0,
			r == 0x061c, r == 0x200b, r == 0x200c, r == 0x200d, r == 0x200e, r == 0x200f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0xfeff, r == utf8.RuneError:
			return -1
		}
		return r
	}, s)
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
