package gatewayclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
)

// The HTTP API requests (routing, client tools, capability reports) reach a
// real gateway with the key, and routing revalidates its disk cache.
func TestRemoteAPIRequests(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	cache := t.TempDir()
	r := NewRemote(g.URL, g.Key, cache)
	defer r.Close()
	ctx := context.Background()
	rules, err := r.Routing(ctx)
	if err != nil || len(rules.Client) == 0 {
		t.Fatalf("routing: %+v %v", rules, err)
	}
	if _, etag := r.readRulesCache(); etag == "" {
		t.Fatal("routing rules not cached with their ETag")
	}
	if _, err := r.Routing(ctx); err != nil {
		t.Fatalf("revalidating routing: %v", err)
	}
	tools := []wire.ClientTool{{ID: "probe:here", Description: "only on this machine"}}
	if err := r.ReportTools(ctx, "client-1", tools); err != nil {
		t.Fatalf("report: %v", err)
	}
	if err := r.ReportTools(ctx, "", tools); pmlerr.CodeOf(err, "") != pmlerr.NetworkError {
		t.Fatalf("report without client id: want NETWORK_ERROR (HTTP 400), got %v", err)
	}
	found, err := r.Discover(ctx, wire.DiscoverRequest{Name: "probe:here"})
	if err != nil || found.Total != 1 || found.Tools[0].Routing != "client" {
		t.Fatalf("discover the reported tool: %+v %v", found, err)
	}
	if ref, err := r.LearnCapability(ctx, wire.LearnRequest{Code: "return 7", Intent: "seven"}); err != nil || ref != nil && ref.Name == "" {
		t.Fatalf("learn: %+v %v", ref, err)
	}
	if _, err := r.LearnCapability(ctx, wire.LearnRequest{Code: "return (", Intent: "broken"}); pmlerr.CodeOf(err, "") != pmlerr.NetworkError {
		t.Fatalf("learn broken code: want NETWORK_ERROR (HTTP 400), got %v", err)
	}
	if err := r.ReportTools(ctx, "client-1", tools); err != nil {
		t.Fatalf("report after refusals: %v", err)
	}
}

// A gateway refusing the key is UNAUTHORIZED on every API request, an
// overloaded one is not taken for an absent one, and a gateway that is gone
// is NETWORK_ERROR; the cached rules still answer.
func TestRemoteAPIFailures(t *testing.T) {
	var status atomic.Int32
	status.Store(http.StatusUnauthorized)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(int(status.Load()))
	}))
	r := NewRemote(srv.URL, "pml_bad", filepath.Join(t.TempDir(), "cache"))
	ctx := context.Background()
	if err := r.ReportTools(ctx, "c", nil); pmlerr.CodeOf(err, "") != pmlerr.Unauthorized {
		t.Fatalf("report, refused key: %v", err)
	}
	if _, err := r.LearnCapability(ctx, wire.LearnRequest{Code: "return 1", Intent: ""}); pmlerr.CodeOf(err, "") != pmlerr.Unauthorized {
		t.Fatalf("learn, refused key: %v", err)
	}
	status.Store(http.StatusInternalServerError)
	if rules, err := r.Routing(ctx); pmlerr.CodeOf(err, "") != pmlerr.NetworkError || len(rules.Client) == 0 {
		t.Fatalf("routing, HTTP 500: want NETWORK_ERROR and the default rules, got %+v %v", rules, err)
	}
	status.Store(http.StatusNoContent)
	if err := r.ReportTools(ctx, "c", nil); err != nil {
		t.Fatalf("report after failures: %v", err)
	}
	srv.Close()
	if err := r.ReportTools(ctx, "c", nil); pmlerr.CodeOf(err, "") != pmlerr.NetworkError {
		t.Fatalf("report, gateway gone: %v", err)
	}
	if _, err := r.LearnCapability(ctx, wire.LearnRequest{Code: "return 1", Intent: ""}); pmlerr.CodeOf(err, "") != pmlerr.NetworkError {
		t.Fatalf("learn, gateway gone: %v", err)
	}
}
