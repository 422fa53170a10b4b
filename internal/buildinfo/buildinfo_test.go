package buildinfo

import (
	"runtime"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	in := Read()
	if in.Version == "" || in.Commit == "" || in.BuildDate == "" {
		t.Fatalf("empty fields: %+v", in)
	}
	if in.GoVersion != runtime.Version() {
		t.Errorf("go version %q", in.GoVersion)
	}
	if !strings.HasPrefix(in.Engine, "QuickJS 20") {
		t.Errorf("engine %q", in.Engine)
	}
}
