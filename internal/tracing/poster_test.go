package tracing

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestHTTPPosterRequest(t *testing.T) {
	var got struct {
		Traces []Trace `json:"traces"`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/traces" {
			t.Errorf("%s %s", r.Method, r.URL.Path)
		}
		if r.Header.Get("Authorization") != "Bearer k1" || r.Header.Get("X-PML-Client") != "package" ||
			r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("headers %v", r.Header)
		}
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	post := HTTPPoster(srv.Client(), srv.URL+"/", "k1")
	if err := post(context.Background(), []Trace{trace("a", ""), trace("b", "a")}); err != nil {
		t.Fatal(err)
	}
	if len(got.Traces) != 2 || got.Traces[1].ParentTraceID != "a" {
		t.Errorf("server got %+v", got)
	}
}

func TestHTTPPosterStatuses(t *testing.T) {
	// date stands for an HTTP date 3 s after the server answers: written
	// then, so that a loaded machine's time between the cases does not count.
	const date = "date"
	tests := []struct {
		status     int
		retryAfter string
		want       string // "ok", "retry-after", "retryable", "permanent"
		delay      time.Duration
	}{
		{200, "", "ok", 0},
		{204, "", "ok", 0},
		{429, "1", "retry-after", time.Second},
		{429, date, "retry-after", 3 * time.Second},
		{429, "", "retry-after", 0},
		{503, "7", "retry-after", 7 * time.Second},
		{503, "", "retryable", 0},
		{500, "", "retryable", 0},
		{408, "", "retryable", 0},
		{401, "", "retryable", 0},
		{403, "", "retryable", 0},
		{400, "", "permanent", 0},
		{413, "", "permanent", 0},
		{422, "", "permanent", 0},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch tt.retryAfter {
			case "":
			case date:
				w.Header().Set("Retry-After", time.Now().Add(3*time.Second).UTC().Format(http.TimeFormat))
			default:
				w.Header().Set("Retry-After", tt.retryAfter)
			}
			w.WriteHeader(tt.status)
			_, _ = w.Write([]byte("nope"))
		}))
		err := HTTPPoster(srv.Client(), srv.URL, "")(context.Background(), []Trace{trace("a", "")})
		srv.Close()
		var ra *RetryAfterError
		var perm *PermanentError
		kind := "retryable"
		switch {
		case err == nil:
			kind = "ok"
		case errors.As(err, &ra):
			kind = "retry-after"
		case errors.As(err, &perm):
			kind = "permanent"
		}
		if kind != tt.want {
			t.Errorf("HTTP %d: %s (%v), want %s", tt.status, kind, err, tt.want)
			continue
		}
		if ra != nil {
			// An HTTP date has one-second resolution, and the answer takes
			// a moment to read.
			if d := ra.Delay - tt.delay; d > 0 || d < -1500*time.Millisecond {
				t.Errorf("HTTP %d Retry-After %q: delay %v, want ~%v", tt.status, tt.retryAfter, ra.Delay, tt.delay)
			}
		}
	}
}

func TestHTTPPosterNetworkError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	err := HTTPPoster(http.DefaultClient, url, "k")(context.Background(), []Trace{trace("a", "")})
	var perm *PermanentError
	if err == nil || errors.As(err, &perm) {
		t.Errorf("down server: %v, want a retryable error", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := map[string]time.Duration{
		"":                              0,
		"0":                             0,
		"120":                           2 * time.Minute,
		"-5":                            0,
		"soon":                          0,
		"Thu, 01 Jan 2026 00:00:30 GMT": 30 * time.Second,
		"Wed, 31 Dec 2025 23:59:00 GMT": 0,
	}
	for in, want := range tests {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}
