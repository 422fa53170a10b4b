package gateway_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/pgtest"
	"github.com/pml-go/pml/internal/wire"
)

// Learning from use across replicas (docs/how-it-works.md "Discover and
// the tool graph"): a discover answered by one replica and the runs after
// it by another teach a third, which lifts the tool the runs called for
// the same query.
func TestLearningFromUseAcrossReplicas(t *testing.T) {
	db := pgtest.Start(t)
	a, b := gatewaytest.Start(t, gateway.Options{DB: db}), gatewaytest.Start(t, gateway.Options{DB: db})
	key := a.NewKey(t, store.Scope{Org: "acme", Project: "web"})
	sa, sb := a.Connect(t, key, false), b.Connect(t, key, false)
	const query = "turn the text into something safe to put in a URL"
	hits := ids(discover(t, sa, wire.DiscoverRequest{Query: query, Limit: 10}).Tools)
	if len(hits) < 5 {
		t.Fatalf("hits %v", hits)
	}
	used := hits[4] // not in the top 3
	ns, action, _ := strings.Cut(used, ":")
	for range 2 {
		discover(t, sa, wire.DiscoverRequest{Query: query, Limit: 3})
		a.Service.Learner().Wait()
		gatewaytest.Execute(t, sb, wire.ExecuteRequest{Code: fmt.Sprintf(`try { await mcp[%q][%q]({}) } catch (e) {} return 1`, ns, action)})
		b.Service.Learner().Wait()
	}
	c := gatewaytest.Start(t, gateway.Options{DB: db})
	if got := ids(discover(t, c.Connect(t, key, false), wire.DiscoverRequest{Query: query, Limit: 3}).Tools); !slices.Contains(got, used) {
		t.Fatalf("after runs that called %s, a third replica answers %v (before: %v)", used, got, hits[:3])
	}
	// Another tenant, and another query, are not moved.
	other := a.NewKey(t, store.Scope{Org: "other", Project: "web"})
	if got := ids(discover(t, c.Connect(t, other, false), wire.DiscoverRequest{Query: query, Limit: 3}).Tools); !slices.Equal(got, hits[:3]) {
		t.Fatalf("another tenant: %v, want %v", got, hits[:3])
	}
}
