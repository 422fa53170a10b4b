package rawjson

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Escaping says what AppendString escapes besides what every JSON string
// must: quotes, backslashes and control characters.
type Escaping int

const (
	// AsJSONStringify escapes nothing more, as JavaScript's JSON.stringify
	// does; s must be valid UTF-8.
	AsJSONStringify Escaping = iota
	// AsEncodingJSON escapes as encoding/json's Marshal does: HTML's <, >
	// and &, U+2028 and U+2029, and writes invalid UTF-8 as U+FFFD.
	AsEncodingJSON
	// AsEncodingJSONWithoutHTML is AsEncodingJSON but for <, > and &, as
	// encoding/json's Encoder writes with SetEscapeHTML(false).
	AsEncodingJSONWithoutHTML
)

// AppendString appends s quoted as a JSON string, escaped as e says.
func AppendString[S ~string | ~[]byte](dst []byte, s S, e Escaping) []byte {
	const hex = "0123456789abcdef"
	safe := &jsonSafe
	if e == AsEncodingJSON {
		safe = &htmlSafe
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		if e == AsJSONStringify {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(dst, s[start:]...), '"')
}

// AppendStrings appends ss as a JSON array of strings escaped as e says.
func AppendStrings(dst []byte, ss []string, e Escaping) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, s, e)
	}
	return append(dst, ']')
}

// jsonSafe and htmlSafe: the ASCII bytes a JSON string holds as they are,
// and those of them encoding/json's HTML escaping keeps.
var jsonSafe, htmlSafe = func() (json, html [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		json[c] = c != '"' && c != '\\'
		html[c] = json[c] && c != '<' && c != '>' && c != '&'
	}
	return json, html
}()

// AppendNumber appends a finite f as encoding/json and JavaScript write
// it (they agree but for -0, which encoding/json writes as -0): the
// shortest form that reads back as f, with an exponent only outside
// [1e-6, 1e21).
func AppendNumber(dst []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' { // 1e-07 -> 1e-7
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}
