package tracing

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Trace is one execution of code (a top-level snippet or a capability). Its
// JSON field names are part of the wire contract of POST /api/traces.
type Trace struct {
	TraceID        string `json:"trace_id"`
	ParentTraceID  string `json:"parent_trace_id,omitempty"`
	WorkflowID     string `json:"workflow_id"`
	CapabilityFQDN string `json:"capability_fqdn,omitempty"`
	// Caller names who ran the code (docs/auth.md): set by the gateway,
	// whatever a package sends.
	Caller          string     `json:"caller,omitempty"`
	ExecutedLocally bool       `json:"executed_locally"`
	Success         bool       `json:"success"`
	ErrorCode       string     `json:"error_code,omitempty"`
	Error           string     `json:"error,omitempty"`
	DurationMS      float64    `json:"duration_ms"`
	StartedAt       time.Time  `json:"started_at"`
	Tasks           []Task     `json:"tasks"`
	Decisions       []Decision `json:"decisions"`
	Code            string     `json:"code,omitempty"`
	// ToolsUsed are the tools the run called; the tools it planned are
	// those of its DAG (PlannedNotCalled says which were not called).
	ToolsUsed []string        `json:"tools_used,omitempty"`
	DAG       json.RawMessage `json:"dag,omitempty"`
	// Logs are the console lines the code printed, when the runner keeps them.
	Logs []string `json:"logs,omitempty"`
	// Truncated says what the trace's bounds left out; absent when nothing.
	Truncated *Truncation `json:"truncated,omitempty"`
}

// Task is one mcp.* call made by the code.
type Task struct {
	TaskID       string          `json:"task_id"`
	Tool         string          `json:"tool"`    // FQDN when known, else ns:action
	ToolID       string          `json:"tool_id"` // ns:action
	Routing      string          `json:"routing,omitempty"`
	Args         json.RawMessage `json:"args"`
	Result       json.RawMessage `json:"result,omitempty"`
	Success      bool            `json:"success"`
	Error        string          `json:"error,omitempty"`
	DurationMS   float64         `json:"duration_ms"`
	StartedAt    time.Time       `json:"started_at"`
	Layer        int             `json:"layer"`
	ChildTraceID string          `json:"child_trace_id,omitempty"`
}

// Decision is a branch the code took, when the runner knows it.
type Decision struct {
	NodeID    string `json:"node_id"`
	Condition string `json:"condition,omitempty"`
	Outcome   string `json:"outcome"`
}

// NewTraceID returns 32 lowercase hex characters: the time in milliseconds
// (48 bits), then 80 random bits, in the order of a UUIDv7. It is also a
// valid W3C trace-id (never all zeros, random in its rightmost bytes), so
// one id names the trace everywhere. Ids made one after another sort
// together, so a store's index of trace ids takes each new one next to the
// last instead of in a random page: a batch of 80 traces into a store
// holding 20,000 is written ~20% faster (docs/performance.md "The trace's
// storing"). The random part keeps ids unguessable.
func NewTraceID() string {
	return newTraceID(time.Now())
}

func newTraceID(now time.Time) string {
	var b [16]byte
	// crypto/rand.Read never fails on supported platforms (it panics instead).
	_, _ = rand.Read(b[6:])
	ms := uint64(now.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	return hex.EncodeToString(b[:])
}
