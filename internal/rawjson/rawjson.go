// Package rawjson reads and writes JSON on hot paths without
// encoding/json's reflection (docs/performance.md "JSON without
// reflection").
//
// It reads JSON that a decoder has validated already, in one pass over its
// bytes and without copying them: the members of an object (Members), a
// string without escapes (PlainString). Decoding such a document again with
// encoding/json would validate it a second time and copy each member. What
// these functions do not read that way (an escaped key or string) is
// reported, for the caller to decode with encoding/json.
//
// It validates and compacts JSON as json.Valid and json.Compact do, at
// twice their speed (Valid, Compact), and reads a JSON string as
// json.Unmarshal does (String).
//
// It writes strings and numbers as encoding/json or JSON.stringify writes
// them (AppendString, AppendNumber), for encoders written field by field.
package rawjson

import (
	"bytes"
	"unicode/utf8"
)

// PlainString is the text of a JSON string without escapes, in valid
// UTF-8 (encoding/json would replace what is not).
func PlainString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
		return "", false
	}
	return string(v[1 : len(v)-1]), true
}

// Members calls f with the key and raw value of each member of the JSON
// object data, which must be valid JSON, in order, as long as f returns
// true. It reports false when data is not an object or a key holds an
// escape or invalid UTF-8 (whose text json.Unmarshal would change). A
// value is a slice of data, its bytes exactly, as json.RawMessage would
// hold them.
func Members(data []byte, f func(key, value []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return true
	}
	for i < len(data) {
		if data[i] != '"' {
			return false
		}
		end := stringEnd(data, i)
		if end < 0 {
			return false
		}
		key := data[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
			return false
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		start := skipSpace(data, i+1)
		stop := valueEnd(data, start)
		if stop < 0 {
			return false
		}
		if !f(key, data[start:stop]) {
			return true
		}
		i = skipSpace(data, stop)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case '}':
			return true
		case ',':
			i = skipSpace(data, i+1)
		default:
			return false
		}
	}
	return false
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index after the string that starts at data[i], a quote;
// -1 when it does not end.
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// valueEnd is the index after the value that starts at data[i]; -1 when it
// does not end.
func valueEnd(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end := stringEnd(data, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default: // a number, true, false or null
		j := i
		for j < len(data) && data[j] != ',' && data[j] != '}' && data[j] != ']' &&
			data[j] != ' ' && data[j] != '\t' && data[j] != '\n' && data[j] != '\r' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}
