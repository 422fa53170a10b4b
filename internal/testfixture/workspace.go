package testfixture

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Workspace writes a temp workspace whose .pml.json allows every tool and
// configures servers (mcpServers entries), for tests that run the package
// in process and for those that run the pml binary on it.
func Workspace(t testing.TB, servers map[string]any) string {
	t.Helper()
	ws := t.TempDir()
	WriteConfig(t, ws, servers)
	return ws
}

// WriteConfig (re)writes ws/.pml.json: every tool allowed, servers as its
// mcpServers.
func WriteConfig(t testing.TB, ws string, servers map[string]any) {
	t.Helper()
	cfg := map[string]any{"version": "1", "permissions": map[string]any{"allow": []string{"*"}}, "mcpServers": servers}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	WriteFile(t, ws, ".pml.json", string(data))
}

// WriteFile writes content to dir/name, creating name's directories.
func WriteFile(t testing.TB, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
