package rawjson

import (
	"bytes"
	"encoding/json"
)

// maxDepth is encoding/json's bound on nesting: deeper is not valid.
const maxDepth = 10000

// Valid reports whether data is one JSON value with optional space around
// it, exactly as json.Valid does (strings may hold invalid UTF-8; nesting
// past encoding/json's 10,000 levels is refused), about twice as fast:
// json.Valid runs a byte-by-byte state machine through function values.
func Valid(data []byte) bool {
	ok, _ := scan(data)
	return ok
}

// Compact appends the valid JSON src without the space between its
// tokens, as json.Compact writes it; false, with dst as it was, when src is
// not valid JSON. Already compact (a result or arguments as JSON.stringify
// or a server writes them), src is appended after one pass.
func Compact(dst, src []byte) ([]byte, bool) {
	ok, spaced := scan(src)
	if !ok {
		return dst, false
	}
	if !spaced {
		return append(dst, src...), true
	}
	buf := bytes.NewBuffer(dst)
	if json.Compact(buf, src) != nil {
		return dst, false
	}
	return buf.Bytes(), true
}

// scan reports whether data is valid JSON, and whether it holds space
// outside its strings.
func scan(data []byte) (ok, spaced bool) {
	// stack holds, for each open container, '{' or '['; one bit would do,
	// but the bytes keep the loop simple and a message is rarely deep.
	var small [64]byte
	stack := small[:0]
	i := skip(data, 0, &spaced)
	for {
		// A value starts at data[i].
		if i >= len(data) {
			return false, spaced
		}
		switch c := data[i]; c {
		case '{', '[':
			if len(stack) >= maxDepth {
				return false, spaced
			}
			stack = append(stack, c)
			i = skip(data, i+1, &spaced)
			if i < len(data) && (c == '{' && data[i] == '}' || c == '[' && data[i] == ']') {
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				if i = objectKey(data, i, &spaced); i < 0 {
					return false, spaced
				}
			}
			continue
		case '"':
			if i = validString(data, i); i < 0 {
				return false, spaced
			}
		case 't':
			if i = literal(data, i, "true"); i < 0 {
				return false, spaced
			}
		case 'f':
			if i = literal(data, i, "false"); i < 0 {
				return false, spaced
			}
		case 'n':
			if i = literal(data, i, "null"); i < 0 {
				return false, spaced
			}
		default:
			if i = number(data, i); i < 0 {
				return false, spaced
			}
		}
		// A value ended at data[i]: close containers, or go on to the next
		// member or element.
		for {
			i = skip(data, i, &spaced)
			if len(stack) == 0 {
				return i == len(data), spaced
			}
			if i >= len(data) {
				return false, spaced
			}
			open := stack[len(stack)-1]
			switch data[i] {
			case ',':
				i = skip(data, i+1, &spaced)
				if open == '{' {
					if i = objectKey(data, i, &spaced); i < 0 {
						return false, spaced
					}
				}
			case '}', ']':
				if open == '{' && data[i] != '}' || open == '[' && data[i] != ']' {
					return false, spaced
				}
				stack = stack[:len(stack)-1]
				i++
				continue
			default:
				return false, spaced
			}
			break
		}
	}
}

// skip is skipSpace, noting in spaced whether there was any.
func skip(data []byte, i int, spaced *bool) int {
	if i < len(data) && data[i] > ' ' {
		return i
	}
	j := skipSpace(data, i)
	if j != i {
		*spaced = true
	}
	return j
}

// objectKey reads a key and its colon at data[i]; it returns where the
// member's value starts, or -1.
func objectKey(data []byte, i int, spaced *bool) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	if i = validString(data, i); i < 0 {
		return -1
	}
	i = skip(data, i, spaced)
	if i >= len(data) || data[i] != ':' {
		return -1
	}
	return skip(data, i+1, spaced)
}

// validString is the index after the valid string at data[i], a quote, or
// -1: no control characters, only JSON's escapes.
func validString(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		if !stringStop[data[j]] {
			continue
		}
		switch data[j] {
		case '"':
			return j + 1
		case '\\':
			j++
			if j >= len(data) {
				return -1
			}
			switch data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if _, ok := hex4(data, j+1); !ok {
					return -1
				}
				j += 4
			default:
				return -1
			}
		default: // a control character
			return -1
		}
	}
	return -1
}

// stringStop marks the bytes a string's scan stops at: its end, an escape,
// a control character.
var stringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func literal(data []byte, i int, word string) int {
	if len(data)-i < len(word) || string(data[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}

// number is the index after the number at data[i], or -1: JSON's grammar,
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func number(data []byte, i int) int {
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return -1
	case data[i] == '0':
		i++
	case '1' <= data[i] && data[i] <= '9':
		i = digits(data, i)
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		j := digits(data, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(data, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(data []byte, i int) int {
	for i < len(data) && '0' <= data[i] && data[i] <= '9' {
		i++
	}
	return i
}
