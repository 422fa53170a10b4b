package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/httpserve"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/tokenauth"
)

// The official TypeScript SDK client signs in to the gateway through OAuth
// (a real OpenID provider, client credentials) and runs code.
func TestTypeScriptSDKSignsInWithOAuth(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "peer", "oauth.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	sdk := filepath.Join("..", "peer", "node_modules", "@modelcontextprotocol", "sdk")
	node, nodeErr := exec.LookPath("node")
	_, sdkErr := os.Stat(sdk)
	if nodeErr != nil || sdkErr != nil {
		if os.Getenv("PML_REQUIRE_NODE") == "1" {
			t.Fatalf("node or the TypeScript SDK is missing: %v %v", nodeErr, sdkErr)
		}
		t.Skip("node or the TypeScript SDK is missing (run `npm ci` in test/peer)")
	}
	p := testfixture.StartOIDCProvider(t)
	g := gatewaytest.StartAt(t, func(base string) gateway.Options {
		p.AddClient(testfixture.OIDCClient{ID: "ci-bot", Secret: "s3cret", Audience: base + "/mcp", Claims: map[string]any{"groups": []string{"acme-web"}}})
		return gateway.Options{Config: gateway.FileConfig{OAuth: &tokenauth.Config{Resource: base + "/mcp", Issuers: []tokenauth.Issuer{{
			Issuer: p.Issuer, RequiredScopes: []string{"pml"},
			Tenants: []tokenauth.TenantRule{{Claim: "groups", Value: "acme-web", Org: "acme", Project: "web", Role: tokenauth.RoleMember}},
		}}}}}
	}, httpserve.Limits{})
	out, err := exec.CommandContext(t.Context(), node, script, g.URL, p.Issuer, "ci-bot", "s3cret").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("oauth peer: %v\n%s", err, out)
	}
	// The run it made is the tenant's.
	req, _ := http.NewRequest(http.MethodGet, g.URL+"/api/traces", nil)
	req.Header.Set("Authorization", "Bearer "+g.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Total int `json:"total"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&page) != nil || page.Total != 1 {
		t.Fatalf("traces of the tenant: %d, %d", resp.StatusCode, page.Total)
	}
}
