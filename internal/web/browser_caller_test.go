package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/wire"
)

// The executions page filters by caller and names the caller of one
// execution.
func TestBrowserFilterByCaller(t *testing.T) {
	exe := chromium(t)
	g := gatewaytest.Start(t, gateway.Options{})
	other := g.NewKey(t, store.Scope{Org: "acme", Project: "web"}) // a second key of the project
	mine := gatewaytest.Execute(t, g.Connect(t, g.Key, false), wire.ExecuteRequest{Code: `return 1`})
	theirs := gatewaytest.Execute(t, g.Connect(t, other, false), wire.ExecuteRequest{Code: `return 2`})
	if mine.Status != wire.StatusSuccess || theirs.Status != wire.StatusSuccess {
		t.Fatalf("runs: %+v %+v", mine, theirs)
	}
	req, _ := http.NewRequest(http.MethodGet, g.URL+"/api/traces/"+theirs.TraceID, nil)
	req.Header.Set("Authorization", "Bearer "+g.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var node struct {
		Trace struct {
			Caller string `json:"caller"`
		} `json:"trace"`
	}
	if err := json.Unmarshal(body, &node); err != nil || !strings.HasPrefix(node.Trace.Caller, "key:") {
		t.Fatalf("the trace's caller: %s", body)
	}

	b := startBrowser(t, exe)
	row := func(id string) string { return `#traces tbody tr[data-trace-id="` + id + `"]` }
	b.do("log in", chromedp.Navigate(g.URL+"/"), chromedp.WaitVisible(`#key`),
		chromedp.SendKeys(`#key`, g.Key), chromedp.Click(`#save-key`), chromedp.WaitVisible(row(mine.TraceID)))
	b.do("filter by the other key", chromedp.SendKeys(`#filters input[name="caller"]`, node.Trace.Caller),
		chromedp.Click(`#filters button[type="submit"]`), chromedp.WaitNotPresent(row(mine.TraceID)), chromedp.WaitVisible(row(theirs.TraceID)))
	if n := b.count(`#traces tbody tr[data-trace-id]`); n != 1 {
		t.Errorf("%d executions of that caller, want 1", n)
	}
	b.open("open it", row(theirs.TraceID), `#summary`)
	if got := b.text(`#summary`); !strings.Contains(got, node.Trace.Caller) {
		t.Errorf("the summary does not name the caller: %q", got)
	}
}
