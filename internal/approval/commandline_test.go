package approval

import (
	"strings"
	"testing"
	"time"
)

// At the command line an approval says to rerun with --approve or to allow
// the tool in .pml.json, naming both; it never speaks of continue_workflow
// (issue 30, items 2 and 9).
func TestCommandLineDescription(t *testing.T) {
	items := []Item{ToolPermissionItem("shell:exec")}
	with := CommandLineDescription(items, ConfigState{Path: "/w/.pml.json", Exists: true})
	without := CommandLineDescription(items, ConfigState{Path: "/w/.pml.json"})
	for _, d := range []string{with, without} {
		for _, want := range []string{"--approve", `"shell:exec"`, "permissions", "/w/.pml.json"} {
			if !strings.Contains(d, want) {
				t.Errorf("%q lacks %q", d, want)
			}
		}
		if strings.Contains(d, "continue_workflow") {
			t.Errorf("%q speaks MCP", d)
		}
	}
	if strings.Contains(with, "pml init") || !strings.Contains(without, "pml init") || !strings.Contains(without, "there is no .pml.json") {
		t.Errorf("with: %q\nwithout: %q", with, without)
	}
	// A one-call approval cannot be allowed for good: only --approve.
	once := CommandLineDescription([]Item{CallItem("filesystem:read_file", "h", "secret_read", ".env", "It holds secrets")}, ConfigState{Path: "/w/.pml.json", Exists: true})
	if !strings.Contains(once, "--approve") || strings.Contains(once, "permissions") {
		t.Errorf("once: %q", once)
	}
	keys := CommandLineDescription([]Item{APIKeyItem("fx", []string{"K"})}, ConfigState{Path: "/w/.pml.json", Exists: true})
	if strings.Contains(keys, "--approve") || !strings.Contains(keys, ".env") {
		t.Errorf("keys: %q", keys)
	}
}

// What --approve approved is said in the command line's terms, one line a
// kind: tools for this run only, with where to allow them for good; never
// continue_workflow (issue 33, section 3, item 6).
func TestCommandLineApproved(t *testing.T) {
	items := []Item{
		ToolPermissionItem("filesystem:write_file"), ToolPermissionItem("shell:exec"),
		CallItem("filesystem:read_file", "h", "secret_read", ".env", "It holds secrets"),
		DependencyItem("memory:read_graph", Dependency{Name: "memory", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"}}),
		IntegrityItem("acme.web.cap.x.1a2b", "sha256-old", "sha256-new", time.Unix(0, 0)),
	}
	got := strings.Join(CommandLineApproved(items, ConfigState{Path: "/w/.pml.json", Exists: true}), "\n")
	want := "approved for this run: filesystem:write_file, shell:exec (to stop asking, add them to permissions.allow in /w/.pml.json)\n" +
		"approved for this one call: filesystem:read_file on .env\n" +
		"approved installing the MCP server memory (runs `npx -y @modelcontextprotocol/server-memory`) for memory:read_graph\n" +
		"approved the changed registry entry acme.web.cap.x.1a2b (new hash sha256-new; the lockfile records it)"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	without := CommandLineApproved([]Item{ToolPermissionItem("shell:exec")}, ConfigState{Path: "/w/.pml.json"})
	if len(without) != 1 || without[0] != "approved for this run: shell:exec (to stop asking, run `pml init` (it creates /w/.pml.json) and add it to its permissions.allow)" {
		t.Errorf("without a .pml.json: %q", without)
	}
}
