package rawjson

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// String is the text of the JSON string v (a whole token, quotes
// included) as json.Unmarshal decodes it into a string: escapes resolved,
// a lone surrogate and each byte of invalid UTF-8 replaced by U+FFFD. It
// reports false for anything that is not one well-formed JSON string, which
// the caller leaves to encoding/json and its error.
func String(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	body := v[1 : len(v)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) && !hasQuoteOrControl(body) {
		return string(body), true
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\':
			if i+1 >= len(body) {
				return "", false
			}
			i++
			switch body[i] {
			case '"', '\\', '/':
				out = append(out, body[i])
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(body, i+1)
				if !ok {
					return "", false
				}
				i += 4
				if utf16.IsSurrogate(r) {
					// A pair only when a low surrogate's escape follows; else
					// the replacement character, and what follows is read
					// on its own, as encoding/json reads it.
					r2, ok := rune(-1), false
					if i+2 < len(body) && body[i+1] == '\\' && body[i+2] == 'u' {
						r2, ok = hex4(body, i+3)
					}
					if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
						r = dec
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				return "", false
			}
			i++
		case c == '"' || c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(body[i:])
			out = utf8.AppendRune(out, r) // RuneError for a bad byte, as encoding/json
			i += size
		}
	}
	return string(out), true
}

// hex4 is the code unit of the four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

func hasQuoteOrControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == '"' {
			return true
		}
	}
	return false
}
