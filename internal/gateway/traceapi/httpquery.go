package traceapi

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/pml-go/pml/internal/gateway/httpapi"
)

// parseQuery reads GET /api/traces parameters. Times are RFC 3339
// (2025-01-02T15:04:05Z) or Unix milliseconds; a bad value is an error
// naming the parameter, never silently ignored.
func parseQuery(v url.Values) (Query, error) {
	q := Query{
		WorkflowID:     v.Get("workflow_id"),
		CapabilityFQDN: v.Get("capability"),
		Tool:           v.Get("tool"),
		Caller:         v.Get("caller"),
	}
	if s := v.Get("success"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return q, fmt.Errorf("success=%q: want true or false", s)
		}
		q.Success = &b
	}
	if s := v.Get("top_level"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return q, fmt.Errorf("top_level=%q: want true or false", s)
		}
		q.TopLevel = b
	}
	var err error
	if q.Since, err = parseTime("since", v.Get("since")); err != nil {
		return q, err
	}
	if q.Until, err = parseTime("until", v.Get("until")); err != nil {
		return q, err
	}
	if q.Page, err = httpapi.PositiveParam("page", v.Get("page"), 1, httpapi.MaxPage); err != nil {
		return q, err
	}
	if q.Limit, err = httpapi.PositiveParam("limit", v.Get("limit"), DefaultPageSize, MaxPageSize); err != nil {
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
