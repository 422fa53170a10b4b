package gateway_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/tracing"
)

// apiCall sends one request to the gateway with key (none when empty) and
// returns the status and body.
func apiCall(t *testing.T, method, url, key string, body any, hdr map[string]string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(enc)
	}
	resp, out := gatewaytest.Do(t, method, url, key, rd, hdr)
	return resp.StatusCode, out
}

// postTraces posts a batch and requires a 200; it returns the ingest result.
func postTraces(t *testing.T, base, key string, traces ...tracing.Trace) (stored, dups int) {
	t.Helper()
	code, body := apiCall(t, http.MethodPost, base+"/api/traces", key, map[string]any{"traces": traces}, nil)
	if code != http.StatusOK {
		t.Fatalf("POST /api/traces: %d %s", code, body)
	}
	var res struct {
		Stored     int `json:"stored"`
		Duplicates int `json:"duplicates"`
	}
	decode(t, body, &res)
	return res.Stored, res.Duplicates
}

func decode(t *testing.T, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
}

// traceAt is a valid local trace started at the given offset from base,
// with one task per tool.
func traceAt(base time.Time, offset time.Duration, workflow string, success bool, tools ...string) tracing.Trace {
	start := base.Add(offset)
	t := tracing.Trace{
		TraceID: tracing.NewTraceID(), WorkflowID: workflow, ExecutedLocally: true, Success: success,
		DurationMS: 12.5, StartedAt: start, Decisions: []tracing.Decision{},
	}
	if !success {
		t.ErrorCode, t.Error = "TOOL_ERROR", "boom"
	}
	for i, tool := range tools {
		t.Tasks = append(t.Tasks, tracing.Task{
			TaskID: fmt.Sprintf("t%d", i+1), Tool: tool, ToolID: tool, Routing: "client",
			Args: json.RawMessage(`{}`), Result: json.RawMessage(`1`), Success: true,
			DurationMS: 1, StartedAt: start.Add(time.Duration(i) * time.Millisecond), Layer: i,
		})
	}
	return t
}

type listed struct {
	Traces []struct {
		TraceID     string   `json:"trace_id"`
		WorkflowID  string   `json:"workflow_id"`
		Success     bool     `json:"success"`
		ToolsUsed   []string `json:"tools_used"`
		TaskCount   int      `json:"task_count"`
		FailedTasks int      `json:"failed_tasks"`
	} `json:"traces"`
	Total int `json:"total"`
	Page  int `json:"page"`
	Limit int `json:"limit"`
}

func listTraces(t *testing.T, base, key, query string) listed {
	t.Helper()
	code, body := apiCall(t, http.MethodGet, base+"/api/traces"+query, key, nil, nil)
	if code != http.StatusOK {
		t.Fatalf("GET /api/traces%s: %d %s", query, code, body)
	}
	var l listed
	decode(t, body, &l)
	return l
}

type treeNode struct {
	Trace    tracing.Trace `json:"trace"`
	Children []treeNode    `json:"children"`
}

func getTree(t *testing.T, base, key, id string) treeNode {
	t.Helper()
	code, body := apiCall(t, http.MethodGet, base+"/api/traces/"+id, key, nil, nil)
	if code != http.StatusOK {
		t.Fatalf("GET /api/traces/%s: %d %s", id, code, body)
	}
	var n treeNode
	decode(t, body, &n)
	return n
}
