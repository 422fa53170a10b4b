package workspace

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/testfixture"
)

// "auth" takes only "oauth", and only on an http server; the refusal is
// INVALID_CONFIG naming the server, and the corrected file loads.
func TestConfigAuthShapes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ConfigFile)
	for _, tc := range []struct{ server, want string }{
		{`{"url": "http://127.0.0.1:9/mcp", "auth": "basic"}`, `mcpServers.s: auth must be "oauth", not "basic"`},
		{`{"command": "x", "auth": "oauth"}`, `mcpServers.s: auth "oauth" needs an http server, not stdio`},
		{`{"type": "sse", "url": "http://127.0.0.1:9/sse", "auth": "oauth"}`, `needs an http server, not sse`},
		{`{"url": "http://127.0.0.1:9/mcp", "auht": "oauth"}`, `unknown key "mcpServers.s.auht" (did you mean "auth"?)`},
	} {
		testfixture.WriteFile(t, dir, ConfigFile, `{"version": "1", "mcpServers": {"s": `+tc.server+`}}`)
		_, err := LoadConfig(path)
		if pmlerr.CodeOf(err, "") != pmlerr.InvalidConfig || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want INVALID_CONFIG with %q", tc.server, err, tc.want)
		}
	}
	testfixture.WriteFile(t, dir, ConfigFile, `{"version": "1", "mcpServers": {"s": {"url": "http://127.0.0.1:9/mcp", "auth": "oauth"}}}`)
	cfg, err := LoadConfig(path)
	if err != nil || cfg.MCPServers["s"].Auth != AuthOAuth {
		t.Fatalf("valid: %+v %v", cfg.MCPServers, err)
	}
	up, _ := cfg.MCPServers["s"].upstreamConfig("s", dir, nil)
	if !up.StoredOAuth {
		t.Fatalf("upstream config lost auth: %+v", up)
	}
}

// AddOAuthServer keeps the rest of .pml.json (keys it does not know
// included), replaces an entry of the same name, and refuses a file that
// does not load without touching it.
func TestAddOAuthServer(t *testing.T) {
	dir := t.TempDir()
	testfixture.WriteFile(t, dir, ConfigFile, `{"version": "1", "permissions": {"allow": ["x"]}, "mcpServers": {"notes": {"command": "old"}, "other": {"command": "keep"}}}`)
	if _, err := AddOAuthServer(dir, "notes", "https://example.invalid/mcp"); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(filepath.Join(dir, ConfigFile))
	if err != nil || !reflect.DeepEqual(cfg.MCPServers["notes"], ServerConfig{Type: "http", URL: "https://example.invalid/mcp", Auth: AuthOAuth}) ||
		cfg.MCPServers["other"].Command != "keep" || len(cfg.Permissions.Allow) != 1 {
		t.Fatalf("%+v %v", cfg, err)
	}
	bad := `{"version": "1", "permisions": {}}`
	testfixture.WriteFile(t, dir, ConfigFile, bad)
	if _, err := AddOAuthServer(dir, "notes", "https://example.invalid/mcp"); pmlerr.CodeOf(err, "") != pmlerr.InvalidConfig {
		t.Fatalf("broken file: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, ConfigFile)); string(data) != bad {
		t.Fatalf("a broken file was rewritten: %s", data)
	}
}
