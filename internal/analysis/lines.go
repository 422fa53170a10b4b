package analysis

import (
	"sort"
	"unicode/utf16"
	"unicode/utf8"
)

// lineIndex locates lines in a text the way esbuild and JavaScript count
// them: \n, \r, \r\n, U+2028 and U+2029 each end a line.
type lineIndex struct {
	text   string
	starts []int // byte offset of each line's first byte
}

func newLineIndex(text string) lineIndex {
	starts := []int{0}
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\n':
			i++
			starts = append(starts, i)
		case c == '\r':
			i++
			if i < len(text) && text[i] == '\n' {
				i++
			}
			starts = append(starts, i)
		case c == 0xE2 && i+2 < len(text) && text[i+1] == 0x80 && (text[i+2] == 0xA8 || text[i+2] == 0xA9):
			i += 3
			starts = append(starts, i)
		default:
			i++
		}
	}
	return lineIndex{text: text, starts: starts}
}

// count is the number of lines (at least 1).
func (x lineIndex) count() int { return len(x.starts) }

// line returns line n (1-based) without its terminator.
func (x lineIndex) line(n int) string {
	if n < 1 || n > len(x.starts) {
		return ""
	}
	start := x.starts[n-1]
	end := len(x.text)
	if n < len(x.starts) {
		end = x.starts[n]
	}
	s := x.text[start:end]
	for len(s) > 0 {
		switch {
		case s[len(s)-1] == '\n' || s[len(s)-1] == '\r':
			s = s[:len(s)-1]
		case len(s) >= 3 && s[len(s)-3] == 0xE2 && s[len(s)-2] == 0x80 && (s[len(s)-1] == 0xA8 || s[len(s)-1] == 0xA9):
			s = s[:len(s)-3]
		default:
			return s
		}
	}
	return s
}

// position returns the 1-based line and 0-based UTF-16 column of a byte
// offset.
func (x lineIndex) position(off int) (line, col int) {
	line = sort.Search(len(x.starts), func(i int) bool { return x.starts[i] > off })
	return line, utf16Len(x.line(line), off-x.starts[line-1])
}

// utf16Len counts the UTF-16 code units of the first byteCol bytes of s.
func utf16Len(s string, byteCol int) int {
	if byteCol > len(s) {
		byteCol = len(s)
	}
	n := 0
	for i := 0; i < byteCol; {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n += utf16.RuneLen(r) // an invalid byte decodes as U+FFFD: one unit
	}
	return n
}
