package approval

import (
	"strings"
	"testing"
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
