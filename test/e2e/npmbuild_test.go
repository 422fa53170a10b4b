package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// npm/build.mjs run on a dist directory GoReleaser did not finish says so in
// one line and exits 1, not with a stack trace of ENOENT (issue 41, item 2).
// Without node the test is skipped, unless PML_REQUIRE_NODE=1 (CI).
func TestNPMBuildExplainsAMissingDist(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("PML_REQUIRE_NODE") == "1" {
			t.Fatalf("node: %v", err)
		}
		t.Skip("no node")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "npm", "build.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	dist := filepath.Join(t.TempDir(), "dist")
	half := t.TempDir() // a release that failed after its metadata
	if err := os.WriteFile(filepath.Join(half, "metadata.json"), []byte(`{"version":"0.0.1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{dist: "metadata.json", half: "artifacts.json"} {
		cmd := exec.Command(node, script, dir, filepath.Join(t.TempDir(), "out"))
		out, err := cmd.CombinedOutput()
		text := strings.TrimSpace(string(out))
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
			t.Errorf("%s: %v, want exit 1\n%s", dir, err, text)
		}
		if strings.Count(text, "\n") != 0 || !strings.Contains(text, "no "+filepath.Join(dir, want)) ||
			!strings.Contains(text, "goreleaser") || strings.Contains(text, "ENOENT") {
			t.Errorf("%s: want one line naming %s and how to build it, got:\n%s", dir, want, text)
		}
	}
}
