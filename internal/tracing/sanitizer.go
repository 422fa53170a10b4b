package tracing

import (
	"encoding/json"
	"slices"
	"sync"

	"github.com/pml-go/pml/internal/lru"
	"github.com/pml-go/pml/internal/sanitize"
	"github.com/pml-go/pml/internal/textcut"
)

// Limits and markers of the sanitizer (internal/sanitize), under the names
// the trace pipeline and its readers use.
const (
	MaxStringBytes = sanitize.MaxStringBytes
	PreviewBytes   = sanitize.PreviewBytes
	MaxNesting     = sanitize.MaxNesting
	MaxValueBytes  = sanitize.MaxValueBytes

	Redacted  = sanitize.Redacted
	MaskEmail = sanitize.MaskEmail
	MaskPhone = sanitize.MaskPhone
	MaskCard  = sanitize.MaskCard
	MaskSSN   = sanitize.MaskSSN
	TooDeep   = sanitize.TooDeep
)

// Sanitizer is the sanitizer of internal/sanitize (its rules, String,
// Value, HasSecret, Flag) with what only traces need: Trace, which
// sanitizes and bounds a whole trace, and a cache of sanitized DAGs. It is
// safe for concurrent use.
type Sanitizer struct {
	*sanitize.Sanitizer

	// dags keeps the sanitized DAG of each recent trace DAG, by its JSON.
	// The same code runs again and again and its DAG is the same each time,
	// while decoding, walking and encoding it costs more than the rest of a
	// short run's trace, on the answer's path (docs/performance.md "The
	// hybrid path"). The result depends on nothing but the input and s.
	dagsOnce sync.Once
	dags     *lru.Cache[string, json.RawMessage]

	// codes keeps the sanitized code of recent traces, by the code, for
	// the same reason: scanning a snippet for secrets was most of finishing
	// a short run's trace (docs/performance.md "A taped run's start, and
	// the trace's code").
	codesOnce sync.Once
	codes     *lru.Cache[string, string]

	// values keeps the sanitized form of recent small call arguments and
	// results, by their JSON, for the same reason: code run again calls its
	// tools with the same arguments, often getting the same results, and
	// sanitizing each as it is recorded was most of recording a call
	// (docs/performance.md "What code mode costs over a direct call").
	valuesOnce sync.Once
	values     *lru.Cache[string, json.RawMessage]
}

// NewSanitizer returns a Sanitizer that also redacts every exact occurrence
// of secretValues (the values of keys loaded from .env), as sanitize.New.
func NewSanitizer(secretValues []string) *Sanitizer {
	return &Sanitizer{Sanitizer: sanitize.New(secretValues)}
}

// The DAG cache's bounds: a DAG is small (a node per call site), and a
// larger one is sanitized each time rather than kept.
const (
	dagCacheEntries  = 256
	dagCacheBytes    = 4 << 20
	dagCacheMaxInput = 64 << 10
)

// The value cache's bounds: the arguments and results of calls, up to
// 1 KiB each; a larger one is sanitized each time rather than kept.
const (
	valueCacheEntries  = 1024
	valueCacheBytes    = 2 << 20
	valueCacheMaxInput = 1 << 10
)

// dag sanitizes a trace's DAG through s.dags.
func (s *Sanitizer) dag(v json.RawMessage) json.RawMessage {
	if len(v) == 0 || len(v) > dagCacheMaxInput {
		return s.Value(v)
	}
	s.dagsOnce.Do(func() { s.dags = lru.New[string, json.RawMessage](dagCacheEntries, dagCacheBytes) })
	return s.cachedValue(s.dags, v)
}

// code sanitizes a trace's code through s.codes, with the DAG cache's
// bounds.
func (s *Sanitizer) code(c string) string {
	if c == "" || len(c) > dagCacheMaxInput {
		return s.String(c)
	}
	s.codesOnce.Do(func() { s.codes = lru.New[string, string](dagCacheEntries, dagCacheBytes) })
	if out, ok := s.codes.Get(c); ok {
		return out
	}
	out := s.String(c)
	return s.codes.Add(c, out, len(c)+len(out))
}

// value sanitizes a call's arguments or result through s.values.
func (s *Sanitizer) value(v json.RawMessage) json.RawMessage {
	if len(v) == 0 || len(v) > valueCacheMaxInput {
		return s.Value(v)
	}
	s.valuesOnce.Do(func() { s.values = lru.New[string, json.RawMessage](valueCacheEntries, valueCacheBytes) })
	return s.cachedValue(s.values, v)
}

// cachedValue is s.Value(v) through cache. The result depends on nothing
// but v and s's rules and secret values, which a Sanitizer never changes.
func (s *Sanitizer) cachedValue(cache *lru.Cache[string, json.RawMessage], v json.RawMessage) json.RawMessage {
	key := string(v)
	if out, ok := cache.Get(key); ok {
		return slices.Clone(out)
	}
	out := s.Value(v)
	// Callers get their own copy of a kept value, which they may change.
	return slices.Clone(cache.Add(key, slices.Clone(out), 2*len(key)+len(out)))
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
	out.Code = s.code(t.Code)
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
		task.Args = s.value(task.Args)
	}
	if dirty&partResult != 0 {
		task.Result = s.value(task.Result)
	}
	if dirty&partError != 0 {
		task.Error = s.String(task.Error)
	}
	return task
}

// maxDroppedNotes bounds Truncation.Dropped (Bound writes at most 8).
const maxDroppedNotes = 16
