package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/secretmask"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// secretValues are the values the package keeps from the AI client and
// from traces: those of the workspace .env and the package's own gateway
// key, sorted.
func (p *Workspace) secretValues() []string {
	vals := p.env.DotEnvValues()
	if k := os.Getenv("PML_API_KEY"); k != "" && !slices.Contains(vals, k) {
		vals = append(vals, k)
		slices.Sort(vals)
	}
	return vals
}

// secretFilters returns the trace sanitizer and the answer mask for the
// current secret values, rebuilt only when the values change: building them
// costs about half a millisecond for twenty values, more than a whole local
// run.
func (p *Workspace) secretFilters() (*tracing.Sanitizer, *secretmask.Set) {
	vals := p.secretValues()
	p.secretMu.Lock()
	defer p.secretMu.Unlock()
	if p.sanitizer == nil || !slices.Equal(vals, p.secretVals) {
		p.secretVals = vals
		p.sanitizer = tracing.NewSanitizer(vals)
		p.answerMask = secretmask.New(vals, secretmask.DefaultMinLen, tracing.Redacted)
	}
	return p.sanitizer, p.answerMask
}

// traceSanitizer is what traces are sanitized with before they are stored
// or leave the machine.
func (p *Workspace) traceSanitizer() *tracing.Sanitizer {
	san, _ := p.secretFilters()
	return san
}

// answerScope lets a run deep inside Execute tell it that the person
// approved reading a .env file, so the answer goes out unmasked.
type answerScope struct{ reveal bool }

type answerScopeKey struct{}

func withAnswerScope(ctx context.Context) (context.Context, *answerScope) {
	s := &answerScope{}
	return context.WithValue(ctx, answerScopeKey{}, s), s
}

// revealEnv marks the answer of ctx's execute as allowed to carry .env values.
func revealEnv(ctx context.Context) {
	if s, ok := ctx.Value(answerScopeKey{}).(*answerScope); ok {
		s.reveal = true
	}
}

// maskAnswer replaces every secret value (and its obvious transforms) in
// what the AI client reads: the result, errors, logs, descriptions and
// context of an answer.
func maskAnswer(a wire.Answer, m *secretmask.Set) wire.Answer {
	if m.Empty() {
		return a
	}
	a.Result = maskJSON(a.Result, m)
	a.Error = m.Mask(a.Error)
	a.Description = m.Mask(a.Description)
	a.Reason = m.Mask(a.Reason)
	if a.Logs != nil {
		logs := make([]string, len(a.Logs))
		for i, l := range a.Logs {
			logs[i] = m.Mask(l)
		}
		a.Logs = logs
	}
	a.Context = maskMap(a.Context, m)
	a.Details = maskMap(a.Details, m)
	return a
}

// maskJSON masks inside a JSON value, keeping it valid JSON: a masked number
// becomes the marker string. Escapes could hide a value from a text search,
// so text with a backslash is always decoded.
func maskJSON(raw json.RawMessage, m *secretmask.Set) json.RawMessage {
	if len(raw) == 0 || (!bytes.Contains(raw, []byte(`\`)) && !m.Contains(string(raw))) {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return json.RawMessage(mustMarshal(m.Mask(string(raw)))) // not JSON: masked as text
	}
	return mustMarshal(maskValue(v, m))
}

func maskMap(in map[string]any, m *secretmask.Set) map[string]any {
	if len(in) == 0 {
		return in
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return in
	}
	masked := maskJSON(raw, m)
	if bytes.Equal(masked, raw) {
		return in
	}
	var out map[string]any
	if err := json.Unmarshal(masked, &out); err != nil {
		return in
	}
	return out
}

func maskValue(v any, m *secretmask.Set) any {
	switch x := v.(type) {
	case string:
		return m.Mask(x)
	case json.Number:
		if s := m.Mask(x.String()); s != x.String() {
			return s
		}
		return x
	case []any:
		for i := range x {
			x[i] = maskValue(x[i], m)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[m.Mask(k)] = maskValue(e, m)
		}
		return out
	}
	return v
}

// mustMarshal encodes a decoded JSON value, which cannot fail, without
// escaping HTML characters.
func mustMarshal(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage(`null`)
	}
	return json.RawMessage(strings.TrimSuffix(b.String(), "\n"))
}
