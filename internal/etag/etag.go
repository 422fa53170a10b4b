// Package etag answers conditional requests: whether an If-None-Match
// header names the entity tag a handler is about to serve.
package etag

import "strings"

// NoneMatch reports whether header, an If-None-Match value, names tag: it is
// "*" or a comma-separated list of entity tags, one of which equals tag
// under weak comparison (W/ prefixes ignored, the quoted opaque parts equal
// byte for byte). A tag is matched whole, never as a substring of another.
// A malformed list matches up to where it stops being well formed, so a
// garbled header costs a full answer, never a wrong 304.
func NoneMatch(header, tag string) bool {
	want, ok := opaque(tag)
	if !ok {
		return false
	}
	for {
		header = strings.TrimLeft(header, " \t,")
		if header == "" {
			return false
		}
		if header[0] == '*' {
			// Any current representation: the handler has one.
			return true
		}
		var got string
		got, header, ok = next(header)
		if !ok {
			return false
		}
		if got == want {
			return true
		}
	}
}

// opaque is tag's quoted part, without its W/ prefix.
func opaque(tag string) (string, bool) {
	got, rest, ok := next(tag)
	return got, ok && rest == ""
}

// next reads one entity tag at the start of s: [W/] DQUOTE *etagc DQUOTE.
// It returns the quoted part (quotes included) and what follows it.
func next(s string) (tag, rest string, ok bool) {
	s = strings.TrimPrefix(s, "W/")
	if len(s) < 2 || s[0] != '"' {
		return "", "", false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return s[:i+1], s[i+1:], true
		case c == 0x21 || (c >= 0x23 && c <= 0x7E) || c >= 0x80:
		default:
			return "", "", false
		}
	}
	return "", "", false
}
