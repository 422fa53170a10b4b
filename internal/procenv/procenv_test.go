package procenv

import (
	"slices"
	"testing"
)

func TestBuildKeepsOnlyTheBaseAndTheExtras(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin", "HOME=/home/u", "LC_ALL=C.UTF-8", "LANG=en_US.UTF-8",
		"PML_API_KEY=pml_secret", "GITHUB_TOKEN=ghp_x", "AWS_SECRET_ACCESS_KEY=abc",
		"NODE_ENV=dev", "malformed", "=nameless",
	}
	got := Build(environ, map[string]string{"NODE_ENV": "production", "HOME": "/tmp/h"})
	want := []string{"PATH=/usr/bin", "LC_ALL=C.UTF-8", "LANG=en_US.UTF-8", "HOME=/tmp/h", "NODE_ENV=production"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if got := Build(environ, nil); slices.ContainsFunc(got, func(kv string) bool { return kv == "PML_API_KEY=pml_secret" }) {
		t.Fatalf("the gateway key reached a child: %q", got)
	}
}

func TestBaseNamesDocumented(t *testing.T) {
	names := BaseNames()
	for _, n := range []string{"PATH", "HOME", "LC_*", "TMPDIR"} {
		if !slices.Contains(names, n) {
			t.Fatalf("%s missing from %v", n, names)
		}
	}
	if !slices.IsSorted(names) {
		t.Fatalf("not sorted: %v", names)
	}
}
