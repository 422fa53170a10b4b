package std

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// segment is one step of a path: an object key or an array index.
type segment struct {
	key   string
	index int
	isIdx bool
}

// parsePath parses a JavaScript-like path: "a.b[0].c", "items.0.name",
// `a["dotted.key"]`, with an optional leading "$". An empty path is the value
// itself.
func parsePath(path string) ([]segment, error) {
	p := strings.TrimSpace(path)
	p = strings.TrimPrefix(p, "$")
	var segs []segment
	for i := 0; i < len(p); {
		switch c := p[i]; {
		case c == '.':
			i++
		case c == '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("path %q: unclosed '['", path)
			}
			inner := strings.TrimSpace(p[i+1 : i+end])
			i += end + 1
			if len(inner) >= 2 && (inner[0] == '"' || inner[0] == '\'') && inner[len(inner)-1] == inner[0] {
				segs = append(segs, segment{key: inner[1 : len(inner)-1]})
				continue
			}
			n, err := strconv.Atoi(inner)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("path %q: %q is not an array index", path, inner)
			}
			segs = append(segs, segment{index: n, isIdx: true})
		default:
			end := strings.IndexAny(p[i:], ".[")
			if end < 0 {
				end = len(p) - i
			}
			segs = append(segs, segment{key: p[i : i+end]})
			i += end
		}
	}
	return segs, nil
}

// lookup walks segs from v, decoding only the containers on the way so the
// value found keeps its original text (key order, number precision). A
// missing key or index reports ok=false; a plain key on an array is used as
// an index when it is a number ("items.0").
func lookup(v json.RawMessage, segs []segment) (json.RawMessage, bool) {
	cur := bytes.TrimSpace(v)
	for _, s := range segs {
		if len(cur) == 0 {
			return nil, false
		}
		switch cur[0] {
		case '{':
			if s.isIdx {
				s.key = strconv.Itoa(s.index)
			}
			var obj map[string]json.RawMessage
			if json.Unmarshal(cur, &obj) != nil {
				return nil, false
			}
			next, ok := obj[s.key]
			if !ok {
				return nil, false
			}
			cur = bytes.TrimSpace(next)
		case '[':
			idx := s.index
			if !s.isIdx {
				n, err := strconv.Atoi(s.key)
				if err != nil {
					return nil, false
				}
				idx = n
			}
			var arr []json.RawMessage
			if json.Unmarshal(cur, &arr) != nil || idx < 0 || idx >= len(arr) {
				return nil, false
			}
			cur = bytes.TrimSpace(arr[idx])
		default:
			return nil, false
		}
	}
	return cur, true
}
