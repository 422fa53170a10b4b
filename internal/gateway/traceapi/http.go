package traceapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"

	"github.com/pml-go/pml/internal/gateway/httpapi"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// ServePost is POST /api/traces {"traces":[...]}. A tenant past its
// ingest limits gets 429 with Retry-After, and nothing of the request is
// stored or charged.
func (a *API) ServePost(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Traces *[]tracing.Trace `json:"traces"`
	}
	read := &countingReader{r: r.Body}
	if err := json.NewDecoder(read).Decode(&body); err != nil {
		httpapi.Error(w, http.StatusBadRequest, "invalid_traces", "body must be {\"traces\":[...]}: "+err.Error())
		return
	}
	if body.Traces == nil {
		httpapi.Error(w, http.StatusBadRequest, "invalid_traces", "body must be {\"traces\":[...]}: no traces field")
		return
	}
	scope := a.scope(r)
	if wait, ok := a.ingest.take(scope, len(*body.Traces), read.n); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		httpapi.Write(w, http.StatusTooManyRequests, map[string]any{
			"error": "rate_limited",
			"message": fmt.Sprintf("this project posted more than %d traces or %d MiB of traces in the last minute; retry after %v",
				a.ingest.limits.TracesPerMinute, a.ingest.limits.BytesPerMinute>>20, wait),
			"retry_after_ms": wait.Milliseconds(),
		})
		return
	}
	res, err := a.Ingest(r.Context(), scope, a.caller(r), *body.Traces)
	switch {
	case pmlerr.CodeOf(err, "") == pmlerr.InvalidRequest:
		httpapi.Error(w, http.StatusBadRequest, "invalid_traces", pmlerr.Message(err))
		return
	case err != nil:
		a.log.Error("ingesting traces", "err", err)
		httpapi.Error(w, http.StatusServiceUnavailable, "store_unavailable", "traces could not be stored; retry shortly")
		return
	}
	depth, derr := strconv.Atoi(r.Header.Get(wire.TraceQueueHeader))
	if derr != nil {
		depth = -1
	}
	dropped, _ := strconv.ParseInt(r.Header.Get(wire.TracesDroppedHeader), 10, 64)
	a.ReportQueue(depth, dropped)
	httpapi.Write(w, http.StatusOK, res)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// ServeList is GET /api/traces?workflow_id=&capability=&tool=&caller=&success=
// &top_level=&since=&until=&page=&limit=.
func (a *API) ServeList(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r.URL.Query())
	if err != nil {
		httpapi.Error(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	page, err := a.List(r.Context(), a.scope(r), q)
	if err != nil {
		a.log.Error("listing traces", "err", err)
		httpapi.Error(w, http.StatusServiceUnavailable, "store_unavailable", "traces could not be read; retry shortly")
		return
	}
	httpapi.Write(w, http.StatusOK, page)
}

// ServeTree is GET /api/traces/{id}: the trace and its child tree.
func (a *API) ServeTree(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	node, err := a.Tree(r.Context(), a.scope(r), id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		httpapi.Error(w, http.StatusNotFound, "not_found", "no trace "+strconv.Quote(id)+" in "+a.owner(r))
		return
	case err != nil:
		a.log.Error("reading trace", "trace_id", id, "err", err)
		httpapi.Error(w, http.StatusServiceUnavailable, "store_unavailable", "the trace could not be read; retry shortly")
		return
	}
	httpapi.Write(w, http.StatusOK, node)
}
