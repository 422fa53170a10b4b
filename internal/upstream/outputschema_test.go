package upstream_test

import (
	"testing"
	"time"

	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/upstream"
)

// TestToolsCarryOutputSchema: a server tool that declares an output schema
// is listed with it, so its declaration types the result; one without keeps
// Promise<unknown>.
func TestToolsCarryOutputSchema(t *testing.T) {
	srv := testfixture.StartHTTPServer(t, testfixture.BuildServer(t))
	p, _ := newPool(t, upstream.Options{})
	s := p.Add(upstream.ServerConfig{Name: "remote", Type: "http", URL: srv.URL})
	list, err := s.Tools(ctxTimeout(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]tools.Info{}
	for _, info := range list {
		byID[info.ID] = info
	}
	add, ok := byID["remote:add"]
	if !ok || len(add.OutputSchema) == 0 {
		t.Fatalf("remote:add listed as %+v, want its output schema", add)
	}
	if got, want := tools.Declaration(add), "/** returns structuredContent {sum} */\nmcp.remote.add(args: { a: number; b: number }): Promise<{ sum: number }>"; got != want {
		t.Fatalf("declaration\n%s\nwant\n%s", got, want)
	}
	if hdr, ok := byID["remote:header"]; !ok || len(hdr.OutputSchema) != 0 {
		t.Fatalf("remote:header listed as %+v, want no output schema", hdr)
	}
}
