// Package sanitize finds and removes secrets and personal data: the rules
// behind sanitized traces (internal/tracing), the check of code before it is
// learned or shared, and the keys kept out of output types. It depends on
// nothing of the trace pipeline, so the registry can use its rules without
// depending on traces (docs/architecture.md "internal/sanitize").
package sanitize

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/pml-go/pml/internal/secretmask"
	"github.com/pml-go/pml/internal/textcut"
)

// Limits of the sanitizer.
const (
	// MaxStringBytes: a longer string is replaced by a preview.
	MaxStringBytes = 10 << 10
	// PreviewBytes is the size of that preview.
	PreviewBytes = 1 << 10
	// MaxNesting: objects and arrays nested deeper become "[MAX_DEPTH]".
	MaxNesting = 20
	// MaxValueBytes caps one sanitized value (an args or a result) as JSON.
	MaxValueBytes = 256 << 10
	// minSecretValue: shorter provided secret values are ignored, since
	// redacting every "abc" would shred the trace without protecting much.
	minSecretValue = 4
)

// Sanitizer removes secrets and personal data from text and JSON values. It
// is immutable and safe for concurrent use.
//
// Rules, in short (see rules.go and keys.go):
//   - JSON values under secret-looking keys (password, token, api_key,
//     authorization, cookie, session, auth, …; whole words, so "author" and
//     "max_tokens" are kept) become "[REDACTED]"; booleans and nulls are kept,
//     they cannot leak a secret.
//   - Secret-looking text anywhere becomes "[REDACTED]": vendor keys (sk-…,
//     sk_live_…, ghp_…, AKIA…, …), JWTs, PEM private keys, Bearer and
//     Authorization credentials, URL passwords, secret-named name=value pairs,
//     and every exact occurrence of the provided secret values.
//   - E-mails, phone numbers, card numbers (issuer prefix + Luhn) and US SSNs
//     are masked as "[EMAIL]", "[PHONE]", "[CARD]", "[SSN]".
//   - A string holding a JSON object or array is sanitized as JSON (and
//     re-encoded compactly); any other string gets the text rules.
//   - Inside a JSON value, a string over MaxStringBytes becomes
//     {"_truncated":true,"preview":"…","original_length":N}; String uses a
//     marker suffix "…[TRUNCATED original_length=N]" instead. Nesting deeper
//     than MaxNesting becomes "[MAX_DEPTH]"; a value still larger than
//     MaxValueBytes becomes the same truncated object.
//   - Object keys get the text rules too (a map keyed by e-mail); masked keys
//     that collide are numbered "[EMAIL]#2".
//
// Output objects have sorted keys. Sanitizing twice gives the result of
// sanitizing once.
type Sanitizer struct {
	secrets     *strings.Replacer // nil when no secret values were given
	transformed *secretmask.Set   // nil likewise; see transforms.go
}

// New returns a Sanitizer that also redacts every exact occurrence of
// secretValues (the values of keys loaded from .env), longest first. Values
// shorter than 4 bytes are ignored.
func New(secretValues []string) *Sanitizer {
	var vals []string
	seen := map[string]bool{}
	add := func(v string) {
		if len(v) >= minSecretValue && !seen[v] {
			seen[v] = true
			vals = append(vals, v)
		}
	}
	for _, v := range secretValues {
		add(v)
		// The same value as it appears inside JSON text held in a string.
		enc, _ := json.Marshal(v)
		add(string(enc[1 : len(enc)-1]))
	}
	s := &Sanitizer{transformed: newTransformed(secretValues)}
	if len(vals) == 0 {
		return s
	}
	slices.SortFunc(vals, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		pairs = append(pairs, v, Redacted)
	}
	s.secrets = strings.NewReplacer(pairs...)
	return s
}

// String sanitizes free text such as a log line or an error message. Text
// over MaxStringBytes is cut to a preview followed by a marker.
// A text that already ends with that marker (cut by a Recorder, or by an
// earlier pass) keeps its marker and has its body cut to the preview, since
// the body may end inside a secret.
func (s *Sanitizer) String(str string) string {
	if body, n, ok := SplitTextMarker(str); ok && n > len(body) {
		return s.preview(body) + TextMarkerPrefix + strconv.Itoa(n) + "]"
	}
	if len(str) <= MaxStringBytes {
		return s.applyRules(str)
	}
	return s.preview(str) + TextMarkerPrefix + strconv.Itoa(len(str)) + "]"
}

// Value sanitizes one JSON value. Input that is not valid JSON is treated as
// text and returned as a JSON string; empty or blank input gives nil. Input
// over MaxValueBytes is not decoded: it becomes the truncated object with a
// preview of its text, so the cost is bounded whatever the input's size.
func (s *Sanitizer) Value(v json.RawMessage) json.RawMessage {
	if len(v) > MaxValueBytes {
		return Encode(s.truncated(PrefixText(v, previewWindow), len(v)))
	}
	if len(bytes.TrimSpace(v)) == 0 {
		return nil
	}
	x, ok := decodeJSON(string(v))
	if !ok {
		return Encode(s.walkString(string(v), 0))
	}
	out := Encode(s.walk(x, 0))
	if len(out) > MaxValueBytes {
		return Encode(s.truncated(string(out), len(v)))
	}
	return out
}

func (s *Sanitizer) walk(x any, depth int) any {
	switch v := x.(type) {
	case map[string]any:
		if depth >= MaxNesting {
			return TooDeep
		}
		if preview, n, ok := asTruncationMarker(v); ok {
			// A value cut earlier: its preview may end inside a secret.
			return s.truncated(preview, n)
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out := make(map[string]any, len(v))
		for _, k := range keys {
			base := s.applyRules(k)
			nk := base
			for i := 2; hasKey(out, nk); i++ {
				nk = fmt.Sprintf("%s#%d", base, i)
			}
			val := v[k]
			if (isSecretKey(k) || isSecretKey(nk)) && val != nil {
				if _, isBool := val.(bool); !isBool {
					out[nk] = Redacted
					continue
				}
			}
			out[nk] = s.walk(val, depth+1)
		}
		return out
	case []any:
		if depth >= MaxNesting {
			return TooDeep
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = s.walk(e, depth+1)
		}
		return out
	case string:
		return s.walkString(v, depth)
	case json.Number:
		// A number can be a card number or a provided secret (a PIN).
		if t := s.applyRules(v.String()); t != v.String() {
			return t
		}
		return v
	default: // bool, nil
		return v
	}
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// walkString sanitizes a string inside a JSON value: embedded JSON as JSON,
// the rest as text, truncating long strings.
func (s *Sanitizer) walkString(str string, depth int) any {
	if len(str) > MaxStringBytes {
		return s.truncated(str, len(str))
	}
	if t := strings.TrimSpace(str); len(t) > 1 && (t[0] == '{' || t[0] == '[') {
		if x, ok := decodeJSON(t); ok {
			enc := string(Encode(s.walk(x, depth+1)))
			if len(enc) > MaxStringBytes {
				return s.truncated(enc, len(str))
			}
			return enc
		}
	}
	return s.applyRules(str)
}

// truncated is the object that replaces an oversized string or value.
func (s *Sanitizer) truncated(str string, originalLen int) map[string]any {
	return TruncationMarker(s.preview(str), originalLen)
}

// asTruncationMarker recognises the object truncationMarker writes (exactly
// its three members) and returns its preview and original length.
func asTruncationMarker(m map[string]any) (preview string, originalLen int, ok bool) {
	if len(m) != 3 || m["_truncated"] != true {
		return "", 0, false
	}
	preview, ok = m["preview"].(string)
	num, isNum := m["original_length"].(json.Number)
	if !ok || !isNum {
		return "", 0, false
	}
	n, err := strconv.Atoi(num.String())
	if err != nil || n < 0 {
		return "", 0, false
	}
	return preview, n, true
}

// preview returns the sanitized first PreviewBytes of str. The rules run on
// a wider window first so a secret straddling the cut is still recognised,
// and again after the cut so the preview is a fixed point of the rules.
func (s *Sanitizer) preview(str string) string {
	window := s.applyRules(textcut.Prefix(str, 2*PreviewBytes))
	return s.applyRules(textcut.Prefix(window, PreviewBytes))
}

// decodeJSON decodes exactly one JSON value, keeping numbers as written.
func decodeJSON(s string) (any, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return x, true
}

// unencodable stands for a value encoding/json refused; walk only produces
// decoded JSON, strings and maps, so it should never appear.
const unencodable = `"[UNENCODABLE]"`

// Encode encodes x as JSON without HTML escaping, so text reads as it was.
func Encode(x any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return json.RawMessage(unencodable)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// previewWindow is how much of an oversized value is read before
// sanitizing: twice the preview, so a secret that straddles the preview's
// end is still recognised (Sanitizer.preview).
const previewWindow = 2 * PreviewBytes

// TruncationMarker is the JSON object that stands for a value cut to
// preview; the sanitizer writes it and recognises it, and so does the trace
// recorder.
func TruncationMarker(preview string, originalLen int) map[string]any {
	return map[string]any{"_truncated": true, "preview": preview, "original_length": originalLen}
}

// PrefixText returns at most n bytes of b as text, without splitting a rune.
func PrefixText(b []byte, n int) string {
	return textcut.Prefix(string(b[:min(len(b), n+4)]), n)
}

// TextMarkerPrefix starts the marker that ends a text cut short; the
// sanitizer writes and recognises it.
const TextMarkerPrefix = "…[TRUNCATED original_length="

// SplitTextMarker splits a text that ends with the truncation marker into
// its body and the original length; ok is false for any other text.
func SplitTextMarker(s string) (body string, originalLen int, ok bool) {
	if !strings.HasSuffix(s, "]") {
		return s, 0, false
	}
	i := strings.LastIndex(s, TextMarkerPrefix)
	if i < 0 {
		return s, 0, false
	}
	n, err := strconv.Atoi(s[i+len(TextMarkerPrefix) : len(s)-1])
	if err != nil || n < 0 {
		return s, 0, false
	}
	return s[:i], n, true
}
