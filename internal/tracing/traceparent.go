package tracing

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
)

// TraceContext is the content of a W3C traceparent header.
type TraceContext struct {
	TraceID  string // 32 lowercase hex
	ParentID string // 16 lowercase hex: the caller's span
	Sampled  bool
}

// Traceparent returns a version-00 W3C traceparent header for traceID with a
// fresh span id and the sampled flag set, or "" when traceID is not a valid
// W3C trace-id (32 hex, not all zero). UUID-style ids (with dashes, any case)
// are normalised, because some callers mint those.
func Traceparent(traceID string) string {
	id := strings.ToLower(strings.ReplaceAll(traceID, "-", ""))
	if !isHexID(id, 32) {
		return ""
	}
	var span [8]byte
	for {
		_, _ = rand.Read(span[:])
		if span != [8]byte{} { // an all-zero parent-id is invalid
			break
		}
	}
	return "00-" + id + "-" + hex.EncodeToString(span[:]) + "-01"
}

// ParseTraceparent parses a traceparent header. Following the W3C rules, a
// version above 00 may carry more fields after the fourth, which are ignored;
// version ff, upper-case hex and all-zero ids are invalid.
func ParseTraceparent(h string) (TraceContext, error) {
	h = strings.TrimSpace(h)
	parts := strings.Split(h, "-")
	if len(parts) < 4 {
		return TraceContext{}, fmt.Errorf("traceparent %q: want 4 fields, got %d", h, len(parts))
	}
	version, traceID, parentID, flags := parts[0], parts[1], parts[2], parts[3]
	if !isLowerHex(version, 2) || version == "ff" {
		return TraceContext{}, fmt.Errorf("traceparent %q: bad version", h)
	}
	if version == "00" && len(parts) != 4 {
		return TraceContext{}, fmt.Errorf("traceparent %q: version 00 has exactly 4 fields", h)
	}
	if !isHexID(traceID, 32) {
		return TraceContext{}, fmt.Errorf("traceparent %q: bad trace-id", h)
	}
	if !isHexID(parentID, 16) {
		return TraceContext{}, fmt.Errorf("traceparent %q: bad parent-id", h)
	}
	if !isLowerHex(flags, 2) {
		return TraceContext{}, fmt.Errorf("traceparent %q: bad flags", h)
	}
	f, _ := hex.DecodeString(flags)
	return TraceContext{TraceID: traceID, ParentID: parentID, Sampled: f[0]&1 == 1}, nil
}

// ValidTraceID reports whether id has the form of a trace id: 32 lowercase
// hex digits, not all zero.
func ValidTraceID(id string) bool { return isHexID(id, 32) }

// isHexID reports whether s is n lowercase hex digits, not all zero.
func isHexID(s string, n int) bool {
	return isLowerHex(s, n) && strings.Trim(s, "0") != ""
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
