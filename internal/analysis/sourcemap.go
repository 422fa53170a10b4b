package analysis

import "sort"

// segment is one source map mapping: a generated column and the original
// position it comes from, all 0-based (columns in UTF-16 code units).
type segment struct {
	genCol, srcLine, srcCol int
}

// OriginalPosition maps a 1-based line and column of JS back to the user's
// TypeScript, through esbuild's source map. A position that maps to no user
// code (the wrapper, a runtime helper) maps to the nearest user code before
// it, or to line 1, column 1.
func (a *Analysis) OriginalPosition(line, column int) (int, int) {
	a.mapOnce.Do(func() { a.lines = decodeMappings(a.mappings) })
	seg, ok := a.lookup(line-1, column-1)
	if !ok {
		return 1, 1
	}
	return a.userPosition(seg.srcLine+1, seg.srcCol)
}

// lookup finds the last mapping at or before (line, col), 0-based.
func (a *Analysis) lookup(line, col int) (segment, bool) {
	if line >= len(a.lines) {
		line, col = len(a.lines)-1, int(^uint(0)>>1)
	}
	for ; line >= 0; line, col = line-1, int(^uint(0)>>1) {
		segs := a.lines[line]
		i := sort.Search(len(segs), func(i int) bool { return segs[i].genCol > col })
		if i > 0 {
			return segs[i-1], true
		}
	}
	return segment{}, false
}

// userPosition turns a 1-based line and 0-based UTF-16 column of the wrapped
// code into a 1-based position in the user's code.
func (a *Analysis) userPosition(line, col int) (int, int) {
	if line == 1 {
		col = max(col-len(wrapPrefix), 0)
	}
	if line > a.origin.count() {
		line = a.origin.count()
		last := a.origin.line(line)
		col = utf16Len(last, len(last))
	}
	return line, col + 1
}

// decodeMappings decodes a source map v3 "mappings" string into segments per
// generated line, sorted by generated column. Malformed input yields what
// could be decoded before it.
func decodeMappings(m string) [][]segment {
	lines := [][]segment{nil}
	var genCol, srcLine, srcCol int
	var fields [5]int
	for i := 0; i < len(m); {
		switch m[i] {
		case ';':
			lines = append(lines, nil)
			genCol = 0
			i++
			continue
		case ',':
			i++
			continue
		}
		n := 0
		for i < len(m) && m[i] != ',' && m[i] != ';' {
			v, next, ok := decodeVLQ(m, i)
			if !ok {
				return lines
			}
			if n < len(fields) {
				fields[n] = v
			}
			n++
			i = next
		}
		genCol += fields[0]
		if n < 4 {
			continue
		}
		srcLine += fields[2]
		srcCol += fields[3]
		cur := &lines[len(lines)-1]
		*cur = append(*cur, segment{genCol: genCol, srcLine: srcLine, srcCol: srcCol})
	}
	for _, segs := range lines {
		sort.SliceStable(segs, func(i, j int) bool { return segs[i].genCol < segs[j].genCol })
	}
	return lines
}

// decodeVLQ reads one base64 VLQ value starting at m[i].
func decodeVLQ(m string, i int) (value, next int, ok bool) {
	shift, result := 0, 0
	for ; i < len(m); i++ {
		d := base64Value(m[i])
		if d < 0 || shift > 30 {
			return 0, i, false
		}
		result |= (d & 31) << shift
		shift += 5
		if d&32 == 0 {
			if result&1 != 0 {
				return -(result >> 1), i + 1, true
			}
			return result >> 1, i + 1, true
		}
	}
	return 0, i, false
}

func base64Value(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 26
	case c >= '0' && c <= '9':
		return int(c-'0') + 52
	case c == '+':
		return 62
	case c == '/':
		return 63
	}
	return -1
}
