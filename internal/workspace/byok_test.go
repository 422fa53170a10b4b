package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/upstream"
	"github.com/pml-go/pml/internal/wire"
)

// A hosted http server that needs the user's key gets it with each call,
// from the workspace .env, and only through the package.
func TestBYOKKeySentWithTheCall(t *testing.T) {
	bin := testfixture.BuildServer(t)
	srv := testfixture.StartHTTPServer(t, bin)
	e := newApprovalEnv(t, `{"permissions": {"allow": ["*"]}}`, nil)
	e.pkg = e.open(map[string]gateway.ServerEntry{"keyed": {Hosted: true, ServerConfig: upstream.ServerConfig{
		Type: "http", URL: srv.URL, Headers: map[string]string{"X-Api-Key": "${FX_BYOK_KEY}"}}}})
	code := `const h = await mcp.keyed.header({name: "X-Api-Key"}); return [h, h.length]`

	a := e.exec(code)
	wantStatus(t, a, wire.StatusApprovalRequired)
	if a.ApprovalType != "api_key_required" || !strings.Contains(a.Description, "FX_BYOK_KEY") {
		t.Fatalf("%+v", a)
	}
	if err := os.WriteFile(filepath.Join(e.ws, ".env"), []byte("FX_BYOK_KEY=byok-12345\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := e.cont(a.WorkflowID, true)
	wantStatus(t, ok, wire.StatusSuccess)
	// The server got the key (its length says so); the AI client sees it
	// masked, as every .env value.
	if string(ok.Result) != `["[REDACTED]",10]` {
		t.Fatalf("the key did not reach the server: %s", ok.Result)
	}

	// Without the package (no keys), the gateway says so instead of running.
	gw := e.pkg.gw.(*gatewayclient.InProcess).Service
	r := gw.Execute(context.Background(), gateway.Caller{Scope: gateway.LocalScope}, wire.ExecuteRequest{Code: code})
	if r.ErrorCode != pmlerr.APIKeyRequired {
		t.Fatalf("%+v", r)
	}
	// A direct call without the key is a clear error, not a leak or a hang.
	_, err := gw.Call(context.Background(), gateway.Caller{Scope: gateway.LocalScope, IsPackage: true}, wire.CallRequest{Tool: "keyed:header", Args: []byte(`{"name":"X-Api-Key"}`)})
	if pmlerr.CodeOf(err, "") != pmlerr.APIKeyRequired {
		t.Fatalf("%v", err)
	}
}
