package tracing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pml-go/pml/internal/lru"
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

// Sanitizer removes secrets and personal data from traces. It is immutable
// and safe for concurrent use.
//
// Rules, in short (see sanitize_rules.go and sanitize_keys.go):
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
	transformed *secretmask.Set   // nil likewise; see sanitize_transforms.go

	// dags keeps the sanitized DAG of each recent trace DAG, by its JSON.
	// The same code runs again and again and its DAG is the same each time,
	// while decoding, walking and encoding it costs more than the rest of a
	// short run's trace, on the answer's path (docs/performance.md "The
	// hybrid path"). The result depends on nothing but the input and s.
	dagsOnce sync.Once
	dags     *lru.Cache[string, json.RawMessage]
}

// The DAG cache's bounds: a DAG is small (a node per call site), and a
// larger one is sanitized each time rather than kept.
const (
	dagCacheEntries  = 256
	dagCacheBytes    = 4 << 20
	dagCacheMaxInput = 64 << 10
)

// dag sanitizes a trace's DAG through s.dags.
func (s *Sanitizer) dag(v json.RawMessage) json.RawMessage {
	if len(v) == 0 || len(v) > dagCacheMaxInput {
		return s.Value(v)
	}
	s.dagsOnce.Do(func() { s.dags = lru.New[string, json.RawMessage](dagCacheEntries, dagCacheBytes) })
	key := string(v)
	if out, ok := s.dags.Get(key); ok {
		return slices.Clone(out)
	}
	out := s.Value(v)
	// Callers get their own copy of a kept value, which they may change.
	return slices.Clone(s.dags.Add(key, slices.Clone(out), 2*len(key)+len(out)))
}

// NewSanitizer returns a Sanitizer that also redacts every exact occurrence of
// secretValues (the values of keys loaded from .env), longest first. Values
// shorter than 4 bytes are ignored.
func NewSanitizer(secretValues []string) *Sanitizer {
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

// Trace returns t with every free-text and JSON field sanitized: task args,
// results and errors, the trace error, code, logs, decisions and the DAG.
// Identifiers (ids, FQDNs, tool ids) are kept as they are. Code is text like
// any other: over MaxStringBytes it is cut to a preview (capabilities keep
// their full code in the registry, not in traces).
//
// The result is within the default Limits (Bound): the tasks past the kept
// head and tail are folded into the aggregate before sanitizing, so the work
// is bounded by the kept tasks, and the sanitized trace is cut to
// MaxTraceBytes.
func (s *Sanitizer) Trace(t Trace) Trace {
	t = foldSpans(t, DefaultHeadSpans, DefaultTailSpans)
	out := s.fields(t)
	if t.Tasks != nil {
		out.Tasks = make([]Task, len(t.Tasks))
		for i, task := range t.Tasks {
			out.Tasks[i] = s.task(task, taskDirty)
		}
	}
	return Bound(out, Limits{})
}

// fields sanitizes every free-text and JSON field of t but its tasks.
func (s *Sanitizer) fields(t Trace) Trace {
	out := t
	out.Error = s.String(t.Error)
	out.Code = s.String(t.Code)
	out.DAG = s.dag(t.DAG)
	if t.Logs != nil {
		out.Logs = make([]string, len(t.Logs))
		for i, l := range t.Logs {
			out.Logs[i] = s.String(l)
		}
	}
	if t.Decisions != nil {
		out.Decisions = make([]Decision, len(t.Decisions))
		for i, d := range t.Decisions {
			d.Condition = s.String(d.Condition)
			d.Outcome = s.String(d.Outcome)
			out.Decisions[i] = d
		}
	}
	if t.Truncated != nil {
		tr := *t.Truncated
		tr.Dropped = nil
		for i, d := range t.Truncated.Dropped {
			if i == maxDroppedNotes {
				break
			}
			tr.Dropped = append(tr.Dropped, textcut.Prefix(s.String(d), maxShortField))
		}
		out.Truncated = &tr
	}
	return out
}

// taskParts says which of a task's free fields are still to sanitize.
type taskParts uint8

const (
	partArgs taskParts = 1 << iota
	partResult
	partError
	taskDirty = partArgs | partResult | partError
)

// task sanitizes the parts of task that dirty names.
func (s *Sanitizer) task(task Task, dirty taskParts) Task {
	if dirty&partArgs != 0 {
		task.Args = s.Value(task.Args)
	}
	if dirty&partResult != 0 {
		task.Result = s.Value(task.Result)
	}
	if dirty&partError != 0 {
		task.Error = s.String(task.Error)
	}
	return task
}

// maxDroppedNotes bounds Truncation.Dropped (Bound writes at most 8).
const maxDroppedNotes = 16

// String sanitizes free text such as a log line or an error message. Text
// over MaxStringBytes is cut to a preview followed by a marker.
// A text that already ends with that marker (cut by a Recorder, or by an
// earlier pass) keeps its marker and has its body cut to the preview, since
// the body may end inside a secret.
func (s *Sanitizer) String(str string) string {
	if body, n, ok := splitTextMarker(str); ok && n > len(body) {
		return s.preview(body) + textMarkerPrefix + strconv.Itoa(n) + "]"
	}
	if len(str) <= MaxStringBytes {
		return s.applyRules(str)
	}
	return s.preview(str) + textMarkerPrefix + strconv.Itoa(len(str)) + "]"
}

// Value sanitizes one JSON value. Input that is not valid JSON is treated as
// text and returned as a JSON string; empty or blank input gives nil. Input
// over MaxValueBytes is not decoded: it becomes the truncated object with a
// preview of its text, so the cost is bounded whatever the input's size.
func (s *Sanitizer) Value(v json.RawMessage) json.RawMessage {
	if len(v) > MaxValueBytes {
		return encode(s.truncated(prefixText(v, previewWindow), len(v)))
	}
	if len(bytes.TrimSpace(v)) == 0 {
		return nil
	}
	x, ok := decodeJSON(string(v))
	if !ok {
		return encode(s.walkString(string(v), 0))
	}
	out := encode(s.walk(x, 0))
	if len(out) > MaxValueBytes {
		return encode(s.truncated(string(out), len(v)))
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
			enc := string(encode(s.walk(x, depth+1)))
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
	return truncationMarker(s.preview(str), originalLen)
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

// encode encodes without HTML escaping, so text reads as it was.
func encode(x any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return json.RawMessage(unencodable)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
