package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/wire"
)

func getDashboard(t *testing.T, g *gatewaytest.Gateway, key, query string) (int, gateway.Dashboard, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, g.URL+"/api/dashboard"+query, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var d gateway.Dashboard
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &d); err != nil {
			t.Fatalf("dashboard answer: %v: %s", err, body)
		}
	}
	return resp.StatusCode, d, string(body)
}

// The dashboard API: the key's tenant only, each range, and a clear 400 for
// a range it does not know, after which it serves the next request.
func TestDashboardAPI(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	s := g.Connect(t, g.Key, false)
	for range 3 {
		if a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.math.add({a: 1, b: 2})`}); a.Status != wire.StatusSuccess {
			t.Fatalf("run: %+v", a)
		}
	}
	if a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.json.parse({data: "{"})`}); a.Status != wire.StatusError {
		t.Fatalf("failing run: %+v", a)
	}

	if st, _, _ := getDashboard(t, g, "", "?range=1h"); st != http.StatusUnauthorized {
		t.Fatalf("without a key: %d", st)
	}
	if st, _, body := getDashboard(t, g, g.Key, "?range=5y"); st != http.StatusBadRequest || !strings.Contains(body, `"error":"bad_request"`) || !strings.Contains(body, `7d`) {
		t.Fatalf("unknown range: %d %s", st, body)
	}
	for _, rg := range []struct {
		query string
		steps int
	}{{"", 61}, {"?range=1h", 61}, {"?range=24h", 97}, {"?range=7d", 85}} {
		st, d, body := getDashboard(t, g, g.Key, rg.query)
		if st != http.StatusOK || d.Totals.Executions != 4 || d.Totals.Errors != 1 || len(d.Series) < rg.steps-1 || len(d.Series) > rg.steps {
			t.Fatalf("%q: %d %d executions, %d errors, %d steps: %s", rg.query, st, d.Totals.Executions, d.Totals.Errors, len(d.Series), body)
		}
		if len(d.ErrorsByCode) != 1 || d.ErrorsByCode[0].Count != 1 || len(d.FailingTools) != 1 || d.FailingTools[0].Tool != "json:parse" {
			t.Fatalf("%q: errors %+v, failing %+v", rg.query, d.ErrorsByCode, d.FailingTools)
		}
		if d.Totals.P50MS <= 0 || d.Totals.P95MS < d.Totals.P50MS {
			t.Fatalf("%q: latency %+v", rg.query, d.Totals)
		}
	}

	// Another tenant sees none of it.
	other, err := gateway.CreateKey(t.Context(), g.Service.Store(), store.Scope{Org: "initech", Project: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if st, d, _ := getDashboard(t, g, other, "?range=7d"); st != http.StatusOK || d.Totals.Executions != 0 || len(d.SlowestTools) != 0 {
		t.Fatalf("another tenant: %d %+v", st, d.Totals)
	}
}
