package gateway

import (
	"encoding/json"
	"mime"
	"net/http"
	"strconv"

	"github.com/pml-go/pml/internal/gateway/httpapi"
	"github.com/pml-go/pml/internal/httpserve"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
)

// serveExecute is POST /api/v1/execute (docs/protocol.md "Plain execute"):
// the execute tool for the package without MCP's framing, so that the
// hybrid path's hop costs one plain JSON request (docs/performance.md "The
// hybrid path"). The run is the execute tool's (Service.Execute), with the
// same caller, limits, admission, approvals, traces and learning; the route
// has the MCP endpoint's key check, draining refusal and load shedding. It is
// bound to the request as an MCP call is (bindRun): the package closing the
// request cancels the run, which keeps its trace under the id the body asks
// for.
//
// A body that is not the request's JSON is 400 bad_request, another content
// type 415; a request the execute tool would refuse is its answer, status
// error, as over MCP. An execute_locally answer carries only what the
// package reads of it.
func (s *Service) serveExecute(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		httpapi.Error(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "an execute request is JSON: send Content-Type: application/json")
		return
	}
	// The route's body limiter read the body whole (none when it is empty).
	body, _ := httpserve.Buffered(r)
	var call wire.ExecuteCall
	if err := json.Unmarshal(body, &call); err != nil {
		httpapi.Error(w, http.StatusBadRequest, "bad_request", "execute request: "+err.Error())
		return
	}
	var ans wire.Answer
	if err := call.Check(); err != nil {
		ans = wire.ErrorAnswer(err, "")
	} else {
		p, _ := r.Context().Value(principalCtxKey{}).(principal)
		ctx, release := s.bindRun(withTraceID(r.Context(), call.TraceID), nil)
		defer release()
		ans = s.Execute(ctx, callerFrom(p, r.Header), call.ExecuteRequest)
	}
	var out []byte
	var err error
	if ans.Status == wire.StatusExecuteLocally {
		out, err = wire.Marshal(wire.LocalAnswer{Status: ans.Status, WorkflowID: ans.WorkflowID, CodeHash: ans.CodeHash})
	} else {
		out, err = wire.Marshal(ans)
	}
	if err != nil {
		out, _ = wire.Marshal(wire.ErrorAnswer(pmlerr.Wrap(pmlerr.Internal, err), ans.WorkflowID))
	}
	// The length lets the package read the answer into one buffer.
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	_, _ = w.Write(out)
	// The answer leaves now, not when the handlers around this one return:
	// the access line (a formatted write to stderr) and the run's release
	// would otherwise come before it on the package's critical path, the
	// hybrid path's hop (docs/performance.md "The hybrid path"). With the
	// length set, flushing writes the same bytes, not a chunked body.
	_ = http.NewResponseController(w).Flush()
}
