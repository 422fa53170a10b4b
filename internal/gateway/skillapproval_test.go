package gateway_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/wire"
)

// A package-less client that declares elicitation is asked through a form
// for another org's skill (issue 39 item 2): approved, the execute
// completes in one call; "always" keeps the version, so the next run asks
// nothing; declined, nothing runs.
func TestPackagelessElicitation(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	acme := g.Connect(t, g.Key, false)
	skill := learn(t, acme, `const p = await mcp.json.parse({data: "[1, 2]"}); return p.length + 100`, "count and add")
	if _, failed := admin(t, acme, visibility(skill.ID, "public")); failed.Status != "" {
		t.Fatalf("publish: %+v", failed)
	}
	_, action, _ := strings.Cut(skill.Name, ":")

	var mu sync.Mutex
	var asked []string
	decision := wire.ChoiceDeny
	client := mcp.NewClient(&mcp.Implementation{Name: "remote", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, req.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": decision}}, nil
		}})
	h := http.Header{"Authorization": {"Bearer " + g.NewKey(t, store.Scope{Org: "beta", Project: "app"})}}
	s, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.URL + "/mcp", HTTPClient: gatewaytest.HTTPClient(h)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	call := wire.ExecuteRequest{Code: `return await mcp["acme.web.cap"].` + action + `({data: "[1]"})`}

	if a := gatewaytest.Execute(t, s, call); a.Status != wire.StatusAborted || len(asked) != 1 || !strings.Contains(asked[0], skill.FQDN) {
		t.Fatalf("declined: %+v, asked %q", a, asked)
	}
	decision = wire.ChoiceAlways
	if a := gatewaytest.Execute(t, s, call); a.Status != wire.StatusSuccess || string(a.Result) != "101" || len(asked) != 2 {
		t.Fatalf("approved: %+v %s, asked %d", a, a.Result, len(asked))
	}
	if a := gatewaytest.Execute(t, s, call); a.Status != wire.StatusSuccess || len(asked) != 2 {
		t.Fatalf("kept: %+v, asked %d", a, len(asked))
	}
}
