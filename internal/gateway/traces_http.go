package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// servePostTraces is POST /api/traces {"traces":[...]}.
func (s *Service) servePostTraces(w http.ResponseWriter, r *http.Request) {
	sc, _ := scopeFrom(r)
	var body struct {
		Traces *[]tracing.Trace `json:"traces"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeJSONError(w, http.StatusBadRequest, "invalid_traces", "body must be {\"traces\":[...]}: "+err.Error())
		return
	}
	if body.Traces == nil {
		writeJSONError(w, http.StatusBadRequest, "invalid_traces", "body must be {\"traces\":[...]}: no traces field")
		return
	}
	res, err := s.IngestTraces(r.Context(), Caller{Scope: sc, IsPackage: true}, *body.Traces)
	switch {
	case pmlerr.CodeOf(err, "") == pmlerr.InvalidRequest:
		writeJSONError(w, http.StatusBadRequest, "invalid_traces", errMessage(err))
		return
	case err != nil:
		s.log.Error("ingesting traces", "err", err)
		writeJSONError(w, http.StatusServiceUnavailable, "store_unavailable", "traces could not be stored; retry shortly")
		return
	}
	depth, derr := strconv.Atoi(r.Header.Get(wire.TraceQueueHeader))
	if derr != nil {
		depth = -1
	}
	dropped, _ := strconv.ParseInt(r.Header.Get(wire.TracesDroppedHeader), 10, 64)
	s.ReportTraceQueue(depth, dropped)
	writeJSON(w, http.StatusOK, res)
}

// serveListTraces is GET /api/traces?workflow_id=&capability=&tool=
// &success=&since=&until=&page=&limit=.
func (s *Service) serveListTraces(w http.ResponseWriter, r *http.Request) {
	sc, _ := scopeFrom(r)
	q, err := parseTraceQuery(r.URL.Query())
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	page, err := s.ListTraces(r.Context(), Caller{Scope: sc}, q)
	if err != nil {
		s.log.Error("listing traces", "err", err)
		writeJSONError(w, http.StatusServiceUnavailable, "store_unavailable", "traces could not be read; retry shortly")
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// serveTrace is GET /api/traces/{id}: the trace and its child tree.
func (s *Service) serveTrace(w http.ResponseWriter, r *http.Request) {
	sc, _ := scopeFrom(r)
	id := r.PathValue("id")
	node, err := s.TraceTree(r.Context(), Caller{Scope: sc}, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeJSONError(w, http.StatusNotFound, "not_found", "no trace "+strconv.Quote(id)+" for this API key's project")
		return
	case err != nil:
		s.log.Error("reading trace", "trace_id", id, "err", err)
		writeJSONError(w, http.StatusServiceUnavailable, "store_unavailable", "the trace could not be read; retry shortly")
		return
	}
	writeJSON(w, http.StatusOK, node)
}

// errMessage is err's message without the code prefix a *pmlerr.Error adds.
func errMessage(err error) string {
	if pe, ok := pmlerr.As(err); ok && pe.Message != "" {
		return pe.Message
	}
	return err.Error()
}
