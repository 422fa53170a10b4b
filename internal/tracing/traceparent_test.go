package tracing

import (
	"strings"
	"testing"
	"time"
)

func TestNewTraceIDIsW3C(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := NewTraceID()
		if !isHexID(id, 32) {
			t.Fatalf("NewTraceID() = %q", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
	}
}

func TestTraceparentRoundTrip(t *testing.T) {
	id := NewTraceID()
	h := Traceparent(id)
	tc, err := ParseTraceparent(h)
	if err != nil {
		t.Fatal(err)
	}
	if tc.TraceID != id || !tc.Sampled || len(tc.ParentID) != 16 {
		t.Errorf("parsed %+v from %q", tc, h)
	}
	if Traceparent(id) == h {
		t.Errorf("span id not fresh")
	}
	uuid := "4BF92F35-77B3-4DA6-A3CE-929D0E0E4736"
	if got := Traceparent(uuid); !strings.HasPrefix(got, "00-4bf92f3577b34da6a3ce929d0e0e4736-") {
		t.Errorf("uuid not normalised: %q", got)
	}
	for _, bad := range []string{"", "wf-123", strings.Repeat("0", 32)} {
		if got := Traceparent(bad); got != "" {
			t.Errorf("Traceparent(%q) = %q, want empty", bad, got)
		}
	}
}

func TestParseTraceparent(t *testing.T) {
	const id, span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	valid := map[string]TraceContext{
		"00-" + id + "-" + span + "-01":            {TraceID: id, ParentID: span, Sampled: true},
		"00-" + id + "-" + span + "-00":            {TraceID: id, ParentID: span},
		" 00-" + id + "-" + span + "-01 ":          {TraceID: id, ParentID: span, Sampled: true},
		"01-" + id + "-" + span + "-01-extra-data": {TraceID: id, ParentID: span, Sampled: true},
	}
	for h, want := range valid {
		got, err := ParseTraceparent(h)
		if err != nil || got != want {
			t.Errorf("ParseTraceparent(%q) = %+v, %v; want %+v", h, got, err, want)
		}
	}
	invalid := []string{
		"",
		"00-" + id + "-" + span,
		"ff-" + id + "-" + span + "-01",
		"00-" + id + "-" + span + "-01-extra",
		"00-" + strings.ToUpper(id) + "-" + span + "-01",
		"00-" + strings.Repeat("0", 32) + "-" + span + "-01",
		"00-" + id + "-" + strings.Repeat("0", 16) + "-01",
		"00-" + id[:30] + "-" + span + "-01",
		"00-" + id + "-" + span + "-1",
		"0x-" + id + "-" + span + "-01",
	}
	for _, h := range invalid {
		if got, err := ParseTraceparent(h); err == nil {
			t.Errorf("ParseTraceparent(%q) = %+v, want error", h, got)
		}
	}
}

// A trace id is 32 lowercase hex characters and a valid W3C trace-id; ids
// made later sort after earlier ones from one millisecond to the next, and
// ids of the same millisecond still differ.
func TestNewTraceIDOrderedAndUnique(t *testing.T) {
	at := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	prev := ""
	for i := range 2000 {
		id := newTraceID(at.Add(time.Duration(i/10) * time.Millisecond))
		if !isHexID(id, 32) || id == strings.Repeat("0", 32) {
			t.Fatalf("id %q is not a W3C trace-id", id)
		}
		if seen[id] {
			t.Fatalf("id %q made twice", id)
		}
		seen[id] = true
		if i%10 == 0 && id <= prev {
			t.Fatalf("id %q of a later millisecond sorts before %q", id, prev)
		}
		prev = max(prev, id)
	}
	if _, err := ParseTraceparent("00-" + NewTraceID() + "-00f067aa0ba902b7-01"); err != nil {
		t.Fatalf("a new id in a traceparent: %v", err)
	}
}
