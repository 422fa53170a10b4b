package tracing

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfterError is returned by a poster when the gateway asked to wait
// (429, or 503 with Retry-After). A zero Delay means "back off as usual".
type RetryAfterError struct {
	Delay  time.Duration
	Status int
}

func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("trace upload: HTTP %d, retry after %s", e.Status, e.Delay)
}

// PermanentError is returned by a poster when the gateway rejected the batch
// for good (a 4xx other than 401, 403, 408 and 429): sending it again cannot
// succeed, so the Syncer isolates and discards the offending traces.
type PermanentError struct {
	Status int
	Body   string
}

func (e *PermanentError) Error() string {
	return fmt.Sprintf("trace upload rejected: HTTP %d: %s", e.Status, e.Body)
}

// maxErrorBody bounds how much of an error answer is read into an error.
const maxErrorBody = 2 << 10

// HTTPPoster returns a poster for the gateway at baseURL: POST
// {baseURL}/api/traces with {"traces":[...]} and the API key as a Bearer
// token. A 401 or 403 is retried like a server error, not discarded: a
// wrong or expired key is fixed by the user, and the queue's bound already
// limits what waits meanwhile.
func HTTPPoster(client *http.Client, baseURL, apiKey string) func(ctx context.Context, batch []Trace) error {
	url := strings.TrimSuffix(baseURL, "/") + "/api/traces"
	return func(ctx context.Context, batch []Trace) error {
		body, err := json.Marshal(struct {
			Traces []Trace `json:"traces"`
		}{batch})
		if err != nil {
			return &PermanentError{Body: fmt.Sprintf("encode batch: %v", err)}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("trace upload: %w", err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-PML-Client", "package")
		if apiKey != "" {
			req.Header.Set("Authorization", "Bearer "+apiKey)
		}
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("trace upload: %w", err)
		}
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		_, _ = io.Copy(io.Discard, resp.Body) // let the connection be reused

		switch code := resp.StatusCode; {
		case code >= 200 && code < 300:
			return nil
		case code == http.StatusTooManyRequests,
			code == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "":
			return &RetryAfterError{Delay: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()), Status: code}
		case code >= 500, code == http.StatusRequestTimeout, code == http.StatusUnauthorized, code == http.StatusForbidden:
			return fmt.Errorf("trace upload: HTTP %d: %s", code, bytes.TrimSpace(msg))
		default:
			return &PermanentError{Status: code, Body: string(bytes.TrimSpace(msg))}
		}
	}
}

// parseRetryAfter reads delay-seconds or an HTTP date; anything else (or a
// date in the past) is 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
