package gatewayclient_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/wire"
)

// balancer round-robins over two replicas on one database.
func balancer(t *testing.T, replicas ...*gatewaytest.Gateway) (string, *atomic.Int64) {
	t.Helper()
	var next atomic.Int64
	proxies := make([]*httputil.ReverseProxy, len(replicas))
	for i, g := range replicas {
		u, err := url.Parse(g.URL)
		if err != nil {
			t.Fatal(err)
		}
		proxies[i] = httputil.NewSingleHostReverseProxy(u)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxies[int(next.Add(1)-1)%len(proxies)].ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &next
}

// A replica that is shutting down refuses new requests with 503 draining:
// the package sends the request again and the other replica runs it, once.
// When every replica drains, the answer is OVERLOADED, and the package
// serves the next request once a replica takes work again.
func TestDrainingReplicaIsRetriedElsewhere(t *testing.T) {
	db := filepath.Join(t.TempDir(), "gw.db")
	a := gatewaytest.Start(t, gateway.Options{DB: db})
	b := gatewaytest.Start(t, gateway.Options{DB: db})
	lb, sent := balancer(t, a, b)
	r := gatewayclient.NewRemote(lb, a.Key, "")
	t.Cleanup(func() { _ = r.Close() })
	ctx := context.Background()
	code := wire.ExecuteRequest{Code: `const x = await mcp.math.add({a: 1, b: 2}); return await mcp.math.add({a: x, b: 3})`}
	if ans, err := r.Execute(ctx, code); err != nil || ans.Status != wire.StatusSuccess {
		t.Fatalf("before draining: %+v %v", ans, err)
	}

	a.Service.StopAdmitting()
	before := sent.Load()
	for range 4 {
		ans, err := r.Execute(ctx, code)
		if err != nil || ans.Status != wire.StatusSuccess {
			t.Fatalf("with one replica draining: %+v %v", ans, err)
		}
	}
	if sent.Load()-before <= 4 {
		t.Fatalf("%d requests for 4 executions: the draining replica was never met", sent.Load()-before)
	}

	b.Service.StopAdmitting()
	_, err := r.Execute(ctx, code)
	if pmlerr.CodeOf(err, "") != pmlerr.Overloaded {
		t.Fatalf("every replica draining: %v, want OVERLOADED", err)
	}
	c := gatewaytest.Start(t, gateway.Options{DB: db})
	lb2, _ := balancer(t, c)
	r2 := gatewayclient.NewRemote(lb2, a.Key, "")
	t.Cleanup(func() { _ = r2.Close() })
	if ans, err := r2.Execute(ctx, code); err != nil || ans.Status != wire.StatusSuccess {
		t.Fatalf("a new replica: %+v %v", ans, err)
	}
	// Nothing ran twice, and the refused request ran nowhere: one trace per
	// answered execution.
	_, traces, err := c.Service.Store().ListTraces(ctx, store.TraceFilter{Scope: store.Scope{Org: "acme", Project: "web"}, Limit: 1})
	if err != nil || traces != 6 {
		t.Fatalf("%d traces for 6 executions answered: %v", traces, err)
	}
}
