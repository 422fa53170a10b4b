package workspace

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/upstream"
	"github.com/pml-go/pml/internal/wire"
)

// A local server whose tools are known (another process listed them: its
// record in .pml/servers/) does not hold discover while it starts: the
// answer lists its known tools at once and names it "starting" (issue 41,
// item 4: a first discover waited 8 s for an npx server the catalog
// already described).
func TestDiscoverAnswersFromKnownToolsWhileServersStart(t *testing.T) {
	// A server that never finishes its start: it answers no handshake.
	p, ws := openLocal(t, `{"permissions": {"allow": ["*"]}, "mcpServers": {"slow": {"command": "sh", "args": ["-c", "sleep 60"]}}}`)
	dir := filepath.Join(ws, StateDir, "servers")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	rec := `{"listed_at": "2026-01-02T03:04:05Z", "tools": [{"id": "slow:echo", "description": "Echo a text back."}]}`
	if err := os.WriteFile(filepath.Join(dir, "slow.json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	d, err := p.Discover(context.Background(), wire.DiscoverRequest{Query: "echo a text", Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= discoverStartWait {
		t.Errorf("discover took %v: it waited for a server whose tools were known", took)
	}
	if !slices.ContainsFunc(d.Tools, func(x wire.DiscoveredTool) bool { return x.ID == "slow:echo" }) {
		t.Errorf("the known tool slow:echo is not in the answer: %+v", d.Tools)
	}
	if st := d.Servers["slow"]; st.State != string(upstream.StateStarting) {
		t.Errorf("servers %+v: want slow starting", d.Servers)
	}
}

// A server nobody has listed is waited for a short while, then named
// "starting" with no tools; the built-in tools are answered all the same.
func TestDiscoverNamesAnUnknownServerStarting(t *testing.T) {
	p, _ := openLocal(t, `{"permissions": {"allow": ["*"]}, "mcpServers": {"slow": {"command": "sh", "args": ["-c", "sleep 60"]}}}`)
	d, err := p.Discover(context.Background(), wire.DiscoverRequest{Query: "read a file", Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if st := d.Servers["slow"]; st.State != string(upstream.StateStarting) {
		t.Errorf("servers %+v: want slow starting", d.Servers)
	}
	if !slices.ContainsFunc(d.Tools, func(x wire.DiscoveredTool) bool { return x.ID == "filesystem:read_file" }) {
		t.Errorf("the built-in tools are missing: %+v", d.Tools)
	}
}
