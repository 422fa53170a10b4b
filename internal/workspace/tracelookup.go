package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/pml-go/pml/internal/gateway/traceapi"
	"github.com/pml-go/pml/internal/gatewayclient"
)

// TraceAPIError is an answer of the trace read API other than 200: its
// status and the API's error code and message.
type TraceAPIError struct {
	Status  int
	Code    string
	Message string
}

func (e *TraceAPIError) Error() string {
	return fmt.Sprintf("%s (HTTP %d)", e.Message, e.Status)
}

// ReadTraceAPI runs one GET on the workspace's trace read API (TraceReader)
// and returns the body of its 200 answer. Another answer is a
// *TraceAPIError carrying the API's message; a gateway that could not be
// reached is its message alone, where and why, since no HTTP answer
// arrived.
func (p *Workspace) ReadTraceAPI(ctx context.Context, path string) ([]byte, error) {
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	rec := httptest.NewRecorder()
	p.TraceReader().ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	if rec.Code == http.StatusOK {
		return body, nil
	}
	var e struct {
		Code    string `json:"error"`
		Message string `json:"message"`
	}
	switch {
	case json.Unmarshal(body, &e) != nil || e.Message == "":
		return nil, &TraceAPIError{Status: rec.Code, Message: "trace API: " + strings.TrimSpace(string(body))}
	case e.Code == gatewayclient.UnreachableCode:
		return nil, errors.New(e.Message)
	}
	return nil, &TraceAPIError{Status: rec.Code, Code: e.Code, Message: e.Message}
}

// TraceLookup is what `pml traces ID` shows: the trees (GET
// /api/traces/{id} answers, traceapi.Node) of the executions id names, and
// when id is a workflow id, a note saying so.
type TraceLookup struct {
	Trees []json.RawMessage
	Note  string
}

// maxWorkflowTraces bounds the executions one workflow id shows; a workflow
// has one in practice (its run's; a run paused for an approval keeps none).
const maxWorkflowTraces = 10

// LookupTrace finds what id names: a trace, or else a workflow id, which
// `pml exec` prints first and so is what people paste; then its executions'
// traces. Neither is the API's not-found, saying it is neither.
func (p *Workspace) LookupTrace(ctx context.Context, id string) (TraceLookup, error) {
	body, err := p.ReadTraceAPI(ctx, "/api/traces/"+url.PathEscape(id))
	var notFound *TraceAPIError
	switch {
	case err == nil:
		return TraceLookup{Trees: []json.RawMessage{body}}, nil
	case !errors.As(err, &notFound) || notFound.Status != http.StatusNotFound:
		return TraceLookup{}, err
	}
	list, lerr := p.ReadTraceAPI(ctx, fmt.Sprintf("/api/traces?top_level=true&limit=%d&workflow_id=%s", maxWorkflowTraces, url.QueryEscape(id)))
	var page traceapi.Page
	if lerr != nil || json.Unmarshal(list, &page) != nil || len(page.Traces) == 0 {
		notFound.Message += ", nor an execution's workflow id"
		return TraceLookup{}, notFound
	}
	var out TraceLookup
	ids := make([]string, 0, len(page.Traces))
	for _, t := range page.Traces {
		tree, err := p.ReadTraceAPI(ctx, "/api/traces/"+url.PathEscape(t.TraceID))
		if err != nil {
			return TraceLookup{}, fmt.Errorf("trace %s of workflow %s: %w", t.TraceID, id, err)
		}
		out.Trees = append(out.Trees, tree)
		ids = append(ids, t.TraceID)
	}
	switch {
	case len(ids) == 1:
		out.Note = fmt.Sprintf("%s is a workflow id; its execution's trace id is %s (`pml traces %s`)", id, ids[0], ids[0])
	default:
		out.Note = fmt.Sprintf("%s is a workflow id; the trace ids of its executions are %s", id, strings.Join(ids, ", "))
		if page.Total > len(ids) {
			out.Note += fmt.Sprintf(" (the newest %d of %d)", len(ids), page.Total)
		}
	}
	return out, nil
}
