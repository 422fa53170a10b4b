package workspace

import (
	"net/http"

	"github.com/pml-go/pml/internal/gateway/httpapi"
	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/web"
)

// TraceReader is the trace read API of the workspace's gateway (GET
// /api/traces and GET /api/traces/{id}): the in-process gateway's store in
// local mode, the remote gateway with the package's key otherwise. Not
// authenticated: callers put it behind the workspace token.
func (p *Workspace) TraceReader() http.Handler {
	if tr, ok := p.gw.(gatewayclient.TraceReader); ok {
		return tr.TraceReader()
	}
	return http.NotFoundHandler()
}

// mountViewer adds the trace viewer to `pml serve`: the page at / and its
// files at /ui/ hold no data and need no token; the API they read does, as
// the Bearer key the page sends (it takes the token from the URL fragment
// that ViewerURL prints, so the token never reaches a server log or a
// Referer). Both are behind the same Origin check as /mcp.
func (p *Workspace) mountViewer(mux *http.ServeMux, o ServeOptions) {
	ui := web.Handler(web.WorkspacePage, nil)
	mux.Handle("GET /{$}", sameOriginOnly(ui))
	mux.Handle("GET /ui/", sameOriginOnly(ui))
	var api = p.TraceReader()
	if o.Token != "" {
		api = requireToken(o.Token, api)
	}
	api = sameOriginOnly(api)
	mux.Handle("GET /api/traces", api)
	mux.Handle("GET /api/traces/{id}", api)
	var catalog http.Handler = http.HandlerFunc(p.serveCatalog)
	if o.Token != "" {
		catalog = requireToken(o.Token, catalog)
	}
	mux.Handle("GET /api/catalog", sameOriginOnly(catalog))
}

// serveCatalog answers the page's catalog: what this workspace can call.
func (p *Workspace) serveCatalog(w http.ResponseWriter, r *http.Request) {
	c, err := p.Catalog(r.Context())
	if err != nil {
		httpapi.Error(w, http.StatusInternalServerError, "internal", "listing the catalog: "+err.Error())
		return
	}
	httpapi.Write(w, http.StatusOK, c)
}

// ViewerURL is the trace viewer's address on a `pml serve` listening at
// addr (host:port), with the token in the fragment: opening it once is
// enough, the page keeps the token for this origin.
func ViewerURL(addr, token string) string {
	if token == "" {
		return "http://" + addr + "/"
	}
	return "http://" + addr + "/#token=" + token
}
