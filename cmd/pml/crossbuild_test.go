package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/testfixture"
)

// Every OS the release builds for (.goreleaser.yaml) compiles, the pml
// command and every package (issue 41, item 1: Unix calls once broke the
// Windows build, and only the host's was ever compiled). One architecture per
// OS here, without linking, to stay cheap; .ci/run builds every GOOS/GOARCH
// and vets each OS.
//
// A long test (testfixture.Long): compiling the module once per OS took 95 s
// of the test command on 2 cores, and .ci/run builds every target anyway
// before it runs the long tests.
func TestEveryReleaseOSBuilds(t *testing.T) {
	testfixture.Long(t)
	if testing.Short() {
		t.Skip("-short: cross-compiles the module")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		t.Skipf("no go command beside this toolchain: %v", err)
	}
	cfg, err := os.ReadFile(filepath.Join("..", "..", ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*goos:\s*\[([^\]]*)\]`).FindSubmatch(cfg)
	if m == nil {
		t.Fatal(".goreleaser.yaml lists no goos")
	}
	for _, goos := range strings.Split(string(m[1]), ",") {
		goos = strings.TrimSpace(goos)
		t.Run(goos, func(t *testing.T) {
			cmd := exec.Command(goBin, "build", "./...")
			cmd.Dir = filepath.Join("..", "..")
			cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("GOOS=%s go build ./...: %v\n%s", goos, err, out)
			}
		})
	}
}
