// Package textcut shortens text to a byte budget without splitting a
// UTF-8 sequence, so that a cut text stays valid wherever it is shown.
package textcut

import "unicode/utf8"

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
