package gateway_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/testfixture"
)

// A gateway config with a key the gateway has not, at any depth, is an
// INVALID_CONFIG naming the key and its likely intended spelling; the
// corrected file loads, and an "sse" server is a valid upstream.
func TestLoadConfigRefusesUnknownKeys(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ body, want string }{
		{`{"servres": {}}`, `unknown key "servres" (did you mean "servers"?)`},
		{`{"servers": {"docs": {"url": "http://127.0.0.1:9/mcp", "hostd": true}}}`, `unknown key "servers.docs.hostd" (did you mean "hosted"?)`},
		{`{"routing": {"clinet": ["x"]}}`, `unknown key "routing.clinet" (did you mean "client"?)`},
		{`{"servers": {"docs": {"type": "websocket", "url": "ws://127.0.0.1:9"}}}`, `type must be one of stdio, http, sse, not "websocket"`},
		{`{"servers": {"docs": {"type": "sse"}}}`, `sse needs a url`},
	} {
		testfixture.WriteFile(t, dir, "gateway.json", tc.body)
		_, err := gateway.LoadConfig(filepath.Join(dir, "gateway.json"))
		var pe *pmlerr.Error
		if !errors.As(err, &pe) || pe.Code != pmlerr.InvalidConfig || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want INVALID_CONFIG with %q", tc.body, err, tc.want)
		}
	}
	testfixture.WriteFile(t, dir, "gateway.json",
		`{"servers": {"legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse", "hosted": true}}, "routing": {"client": ["x"]}}`)
	cfg, err := gateway.LoadConfig(filepath.Join(dir, "gateway.json"))
	if err != nil || cfg.Servers["legacy"].Type != "sse" {
		t.Fatalf("valid config: %+v, %v", cfg, err)
	}
	if _, err := gateway.LoadConfig(filepath.Join(dir, "missing.json")); pmlerr.CodeOf(err, "") != pmlerr.InvalidConfig {
		t.Fatalf("missing file: %v", err)
	}
}
