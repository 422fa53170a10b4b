package gateway

import (
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// parseTraceQuery reads GET /api/traces parameters. Times are RFC 3339
// (2025-01-02T15:04:05Z) or Unix milliseconds; a bad value is an error
// naming the parameter, never silently ignored.
func parseTraceQuery(v url.Values) (TraceQuery, error) {
	q := TraceQuery{
		WorkflowID:     v.Get("workflow_id"),
		CapabilityFQDN: v.Get("capability"),
		Tool:           v.Get("tool"),
	}
	if s := v.Get("success"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return q, fmt.Errorf("success=%q: want true or false", s)
		}
		q.Success = &b
	}
	var err error
	if q.Since, err = parseTime("since", v.Get("since")); err != nil {
		return q, err
	}
	if q.Until, err = parseTime("until", v.Get("until")); err != nil {
		return q, err
	}
	if q.Page, err = parsePositive("page", v.Get("page"), 1, maxPage); err != nil {
		return q, err
	}
	if q.Limit, err = parsePositive("limit", v.Get("limit"), DefaultTracePageSize, MaxTracePageSize); err != nil {
		return q, err
	}
	return q, nil
}

func parseTime(name, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms), nil
	}
	return time.Time{}, fmt.Errorf("%s=%q: want an RFC 3339 time or Unix milliseconds", name, s)
}

// maxPage bounds the page parameter of the list endpoints, so that the
// offset it makes stays far from overflowing.
const maxPage = 1 << 20

func parsePositive(name, s string, def, maxVal int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxVal {
		return 0, fmt.Errorf("%s=%q: want an integer from 1 to %d", name, s, maxVal)
	}
	return n, nil
}
