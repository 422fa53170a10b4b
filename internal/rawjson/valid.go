package rawjson

// maxDepth is encoding/json's bound on nesting: deeper is not valid.
const maxDepth = 10000

// Valid reports whether data is one JSON value with optional space around
// it, exactly as json.Valid does (strings may hold invalid UTF-8; nesting
// past encoding/json's 10,000 levels is refused), several times faster:
// json.Valid runs a byte-by-byte state machine through function values.
func Valid(data []byte) bool {
	// stack holds, for each open container, '{' or '['; one bit would do,
	// but the bytes keep the loop simple and a message is rarely deep.
	var small [64]byte
	stack := small[:0]
	i := skipSpace(data, 0)
	for {
		// A value starts at data[i].
		if i >= len(data) {
			return false
		}
		switch c := data[i]; c {
		case '{', '[':
			if len(stack) >= maxDepth {
				return false
			}
			stack = append(stack, c)
			i = skipSpace(data, i+1)
			if i < len(data) && (c == '{' && data[i] == '}' || c == '[' && data[i] == ']') {
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				if i = objectKey(data, i); i < 0 {
					return false
				}
			}
			continue
		case '"':
			if i = validString(data, i); i < 0 {
				return false
			}
		case 't':
			if i = literal(data, i, "true"); i < 0 {
				return false
			}
		case 'f':
			if i = literal(data, i, "false"); i < 0 {
				return false
			}
		case 'n':
			if i = literal(data, i, "null"); i < 0 {
				return false
			}
		default:
			if i = number(data, i); i < 0 {
				return false
			}
		}
		// A value ended at data[i]: close containers, or go on to the next
		// member or element.
		for {
			i = skipSpace(data, i)
			if len(stack) == 0 {
				return i == len(data)
			}
			if i >= len(data) {
				return false
			}
			open := stack[len(stack)-1]
			switch data[i] {
			case ',':
				i = skipSpace(data, i+1)
				if open == '{' {
					if i = objectKey(data, i); i < 0 {
						return false
					}
				}
			case '}', ']':
				if open == '{' && data[i] != '}' || open == '[' && data[i] != ']' {
					return false
				}
				stack = stack[:len(stack)-1]
				i++
				continue
			default:
				return false
			}
			break
		}
	}
}

// objectKey reads a key and its colon at data[i]; it returns where the
// member's value starts, or -1.
func objectKey(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	if i = validString(data, i); i < 0 {
		return -1
	}
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return -1
	}
	return skipSpace(data, i+1)
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
