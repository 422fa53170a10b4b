package analysis

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tdewolff/parse/v2/js"

	"github.com/pml-go/pml/internal/rawjson"
	"github.com/pml-go/pml/internal/textcut"
)

// maxExprText bounds the source text kept for one {"$expr"}.
const maxExprText = 256

// object is a JSON object that keeps its keys in source order.
type object []member

type member struct {
	key   string
	value any
}

// appendJSON writes the JSON values this package builds (nil, bool,
// float64, string, []any, []string, object) without reflection: it runs for
// every tool call of every analysis.
func appendJSON(buf []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(buf, "null"...)
	case bool:
		return strconv.AppendBool(buf, v)
	case float64:
		return rawjson.AppendNumber(buf, v)
	case string:
		return appendString(buf, v)
	case []string:
		buf = append(buf, '[')
		for i, x := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendString(buf, x)
		}
		return append(buf, ']')
	case []any:
		buf = append(buf, '[')
		for i, x := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendJSON(buf, x)
		}
		return append(buf, ']')
	case object:
		buf = append(buf, '{')
		for i, m := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendString(buf, m.key)
			buf = append(buf, ':')
			buf = appendJSON(buf, m.value)
		}
		return append(buf, '}')
	}
	return append(buf, "null"...)
}

func appendString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				buf = append(buf, '\\', c)
			case c == '\n':
				buf = append(buf, '\\', 'n')
			case c == '\r':
				buf = append(buf, '\\', 'r')
			case c == '\t':
				buf = append(buf, '\\', 't')
			case c < 0x20:
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			default:
				buf = append(buf, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, "\\ufffd"...)
		} else {
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}

// argsJSON renders a tool call's argument (see the package documentation).
func (b *builder) argsJSON(e js.IExpr) json.RawMessage {
	v, _ := toJSON(e, b.refOf)
	return appendJSON(nil, v)
}

// literalValue returns e as a JSON value when it is a pure literal.
func literalValue(e js.IExpr) (any, bool) {
	return toJSON(e, nil)
}

// toJSON converts e to a JSON value. pure is false when any part had to be a
// $ref or an $expr. refOf, when not nil, names results of earlier tasks.
func toJSON(e js.IExpr, refOf func(js.IExpr) string) (value any, pure bool) {
	if refOf != nil {
		if ref := refOf(e); ref != "" {
			return object{{"$ref", ref}}, false
		}
	}
	switch e := unparen(e).(type) {
	case *js.LiteralExpr:
		if v, ok := literal(e); ok {
			return v, true
		}
	case *js.UnaryExpr:
		if l, ok := e.X.(*js.LiteralExpr); ok && (e.Op == js.NegToken || e.Op == js.PosToken) && js.IsNumeric(l.TokenType) {
			if v, ok := literal(l); ok {
				if f, isNum := v.(float64); isNum && e.Op == js.NegToken {
					return -f, true
				}
				return v, true
			}
		}
	case *js.TemplateExpr:
		if e.Tag == nil && len(e.List) == 0 {
			if s, ok := unquoteJS(string(e.Tail)); ok {
				return s, true
			}
		}
	case *js.ArrayExpr:
		if arr, p, ok := arrayJSON(e, refOf); ok {
			return arr, p
		}
	case *js.ObjectExpr:
		if obj, p, ok := objectJSON(e, refOf); ok {
			return obj, p
		}
	}
	return object{{"$expr", exprText(e)}}, false
}

func arrayJSON(a *js.ArrayExpr, refOf func(js.IExpr) string) ([]any, bool, bool) {
	out := make([]any, 0, len(a.List))
	pure := true
	for _, el := range a.List {
		if el.Spread {
			return nil, false, false
		}
		if el.Value == nil { // a hole reads as undefined, which JSON writes as null
			out = append(out, nil)
			continue
		}
		v, p := toJSON(el.Value, refOf)
		out = append(out, v)
		pure = pure && p
	}
	return out, pure, true
}

func objectJSON(o *js.ObjectExpr, refOf func(js.IExpr) string) (object, bool, bool) {
	out := make(object, 0, len(o.List))
	pure := true
	for _, p := range o.List {
		if p.Spread || p.Name == nil || p.Init != nil {
			return nil, false, false
		}
		if _, isMethod := p.Value.(*js.MethodDecl); isMethod {
			return nil, false, false
		}
		key, ok := propertyName(*p.Name)
		if !ok {
			return nil, false, false
		}
		v, vp := toJSON(p.Value, refOf)
		out = append(out, member{key, v})
		pure = pure && vp
	}
	return out, pure, true
}

// literal converts a literal token to its JSON value.
func literal(l *js.LiteralExpr) (any, bool) {
	switch l.TokenType {
	case js.StringToken:
		return unquoteJS(string(l.Data))
	case js.TrueToken:
		return true, true
	case js.FalseToken:
		return false, true
	case js.NullToken:
		return nil, true
	}
	if js.IsNumeric(l.TokenType) {
		return parseNumber(string(l.Data))
	}
	return nil, false
}

// parseNumber parses a JavaScript numeric literal; BigInts and values JSON
// cannot hold are not literals.
func parseNumber(s string) (any, bool) {
	s = strings.ReplaceAll(s, "_", "")
	if strings.HasSuffix(s, "n") {
		return nil, false
	}
	var f float64
	if len(s) > 1 && s[0] == '0' && s[1] != '.' && s[1] != 'e' && s[1] != 'E' {
		base, digits := 8, s[1:]
		switch s[1] {
		case 'x', 'X':
			base, digits = 16, s[2:]
		case 'o', 'O':
			base, digits = 8, s[2:]
		case 'b', 'B':
			base, digits = 2, s[2:]
		}
		n, err := strconv.ParseUint(digits, base, 64)
		if err != nil {
			return nil, false
		}
		f = float64(n)
	} else {
		var err error
		if f, err = strconv.ParseFloat(s, 64); err != nil {
			return nil, false
		}
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, false
	}
	return f, true
}

// unquoteJS decodes a JavaScript string literal or a template without
// substitutions, quotes included.
func unquoteJS(raw string) (string, bool) {
	if len(raw) < 2 || raw[0] != raw[len(raw)-1] || !strings.ContainsRune("'\"`", rune(raw[0])) {
		return "", false
	}
	template := raw[0] == '`'
	s := raw[1 : len(raw)-1]
	var out strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if template && c == '\r' { // templates normalize line ends
			out.WriteByte('\n')
			i++
			if i < len(s) && s[i] == '\n' {
				i++
			}
			continue
		}
		if c != '\\' {
			out.WriteByte(c)
			i++
			continue
		}
		i++
		if i >= len(s) {
			return "", false
		}
		c = s[i]
		i++
		switch c {
		case 'n':
			out.WriteByte('\n')
		case 't':
			out.WriteByte('\t')
		case 'r':
			out.WriteByte('\r')
		case 'b':
			out.WriteByte('\b')
		case 'f':
			out.WriteByte('\f')
		case 'v':
			out.WriteByte('\v')
		case '0':
			if i < len(s) && s[i] >= '0' && s[i] <= '9' {
				return "", false // legacy octal escapes: leave as an expression
			}
			out.WriteByte(0)
		case '\r':
			if i < len(s) && s[i] == '\n' {
				i++
			}
		case '\n':
		case 'x':
			if i+2 > len(s) {
				return "", false
			}
			n, err := strconv.ParseUint(s[i:i+2], 16, 8)
			if err != nil {
				return "", false
			}
			out.WriteRune(rune(n))
			i += 2
		case 'u':
			r, next, ok := unicodeEscape(s, i)
			if !ok {
				return "", false
			}
			i = next
			if utf16IsHigh(r) && strings.HasPrefix(s[i:], "\\u") {
				if lo, after, ok := unicodeEscape(s, i+2); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					r = (r-0xD800)<<10 + (lo - 0xDC00) + 0x10000
					i = after
				}
			}
			if !utf8.ValidRune(r) {
				r = utf8.RuneError
			}
			out.WriteRune(r)
		default:
			if c >= '1' && c <= '9' {
				return "", false
			}
			// Any other escaped character (including a multi-byte one) is itself.
			out.WriteByte(c)
		}
	}
	return out.String(), true
}

// unicodeEscape reads XXXX or {X...} at s[i:].
func unicodeEscape(s string, i int) (rune, int, bool) {
	if i < len(s) && s[i] == '{' {
		end := strings.IndexByte(s[i:], '}')
		if end < 2 {
			return 0, i, false
		}
		n, err := strconv.ParseUint(s[i+1:i+end], 16, 32)
		if err != nil || n > 0x10FFFF {
			return 0, i, false
		}
		return rune(n), i + end + 1, true
	}
	if i+4 > len(s) {
		return 0, i, false
	}
	n, err := strconv.ParseUint(s[i:i+4], 16, 16)
	if err != nil {
		return 0, i, false
	}
	return rune(n), i + 4, true
}

func utf16IsHigh(r rune) bool { return r >= 0xD800 && r <= 0xDBFF }

// valueType is the JSON Schema type of a JSON value.
func valueType(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case object:
		return "object"
	}
	return ""
}

// refOf names the task result path e reads, or "".
func (b *builder) refOf(e js.IExpr) string {
	switch e := e.(type) {
	case *js.GroupExpr:
		return b.refOf(e.X)
	case *js.UnaryExpr:
		if e.Op == js.AwaitToken {
			return b.refOf(e.X)
		}
	case *js.Var:
		return b.vars[canon(e)].ref
	case *js.CallExpr:
		if i, ok := b.callTask[e]; ok {
			return b.tasks[i].id
		}
	case *js.DotExpr:
		if ref := b.refOf(e.X); ref != "" {
			return ref + "." + dotName(e)
		}
	case *js.IndexExpr:
		ref := b.refOf(e.X)
		if ref == "" {
			return ""
		}
		if key, ok := stringKey(e.Y); ok {
			return ref + "." + key
		}
		if i, ok := arrayIndex(e.Y); ok {
			return ref + "[" + strconv.Itoa(i) + "]"
		}
	}
	return ""
}

// exprText is the JavaScript source of e, shortened when long.
func exprText(e js.IExpr) string {
	if e == nil {
		return ""
	}
	var sb strings.Builder
	e.JS(&sb)
	s := sb.String()
	if len(s) > maxExprText {
		s = textcut.Prefix(s, maxExprText) + "…"
	}
	return s
}

// dotName is the property name of x.name (or x.#name).
func dotName(d *js.DotExpr) string {
	switch y := d.Y.(type) {
	case js.LiteralExpr:
		return string(y.Data)
	case *js.LiteralExpr:
		return string(y.Data)
	case *js.Var:
		return string(y.Name())
	}
	return ""
}

// stringKey returns the value of a string literal (or a template without
// substitutions) used as a key.
func stringKey(e js.IExpr) (string, bool) {
	switch e := unparen(e).(type) {
	case *js.LiteralExpr:
		if e.TokenType == js.StringToken {
			return unquoteJS(string(e.Data))
		}
	case *js.TemplateExpr:
		if e.Tag == nil && len(e.List) == 0 {
			return unquoteJS(string(e.Tail))
		}
	}
	return "", false
}

// propertyName returns a non-computed property name.
func propertyName(p js.PropertyName) (string, bool) {
	if p.Computed != nil {
		if s, ok := stringKey(p.Computed); ok {
			return s, true
		}
		return "", false
	}
	if p.Literal.TokenType == js.StringToken {
		return unquoteJS(string(p.Literal.Data))
	}
	if js.IsNumeric(p.Literal.TokenType) {
		if v, ok := parseNumber(string(p.Literal.Data)); ok {
			return strconv.FormatFloat(v.(float64), 'f', -1, 64), true
		}
	}
	return string(p.Literal.Data), len(p.Literal.Data) > 0
}
