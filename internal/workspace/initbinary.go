package workspace

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// NPMPackageEnv names the npm package whose launcher started pml (npm/
// in the repository). The launcher sets it; `pml init` reads it through
// NPMLaunch to decide how .mcp.json starts pml (README "Install").
const NPMPackageEnv = "PML_NPM_PACKAGE"

// npmPackageName is what npm accepts as a package name: `name` or
// `@scope/name`, lower case, at most 214 characters, not starting with a
// dot, underscore or hyphen (an npx option). Nothing else may reach .mcp.json's npx arguments, where
// a value such as `--package=evil@1 -c id` would be an npx option.
var npmPackageName = regexp.MustCompile(`^(@[a-z0-9~][a-z0-9._~-]*/)?[a-z0-9~][a-z0-9._~-]*$`)

// NPMLaunch reads how pml was started through its npm launcher: pkg is
// NPMPackageEnv's value, exe this binary. It answers the package npx should
// start in .mcp.json, or "" when .mcp.json should name exe itself:
//   - a binary under npx's cache (a `_npx` directory) does not last, so only
//     then is the npx form written: npx finds the package again by name;
//   - a binary npm installed (globally or in a project) stays where it is,
//     and naming it needs no registry, which `npx -y` asks first, before it
//     looks at installed packages (a 404 for a package not published).
//
// A value that is not an npm package name is ignored, with a warning for
// the user.
func NPMLaunch(pkg, exe string) (npxPackage, warning string) {
	if pkg == "" {
		return "", ""
	}
	if len(pkg) > 214 || !npmPackageName.MatchString(pkg) {
		return "", fmt.Sprintf("%s=%q is not an npm package name (name or @scope/name); ignored", NPMPackageEnv, pkg)
	}
	if !slices.Contains(strings.FieldsFunc(filepath.ToSlash(exe), func(r rune) bool { return r == '/' }), "_npx") {
		return "", ""
	}
	return pkg, ""
}

// InitBinary picks the command .mcp.json names for the AI client to start:
// exe (this pml) itself, unless it is a build of `go run`, which does not
// last (the temporary one is deleted when go run exits, the cached one
// changes with every edit and goes with `go clean -cache`); then the pml
// found on PATH by lookPath, else an error saying to install it first.
func InitBinary(exe string, lookPath func(string) (string, error)) (string, error) {
	if !isGoRunBuild(exe) {
		return exe, nil
	}
	found, err := lookPath("pml")
	if err == nil && !isGoRunBuild(found) {
		if abs, err := filepath.Abs(found); err == nil {
			return abs, nil
		}
		return found, nil
	}
	return "", errors.New(fmt.Sprint("this pml is a build of `go run` (", exe,
		"), gone when it exits, and no pml is on PATH: run `go install ./cmd/pml` (it installs into $(go env GOPATH)/bin; put that on PATH), then `pml init`"))
}

// isGoRunBuild reports whether exe is where `go run` links its binaries:
// $GOTMPDIR (or the temp dir)/go-buildNNN/bNNN/exe/NAME, or, since Go 1.24,
// the build cache: $GOCACHE/HH/HHHH…-d/NAME (HH the hash's first two hex
// digits). Both are told by their layout, so a GOCACHE set only in the
// shell that ran `go run` is recognised too.
func isGoRunBuild(exe string) bool {
	dir := filepath.Dir(exe)
	if isCacheEntry(filepath.Base(dir), filepath.Base(filepath.Dir(dir))) {
		return true
	}
	if filepath.Base(dir) != "exe" {
		return false
	}
	for d := filepath.Dir(dir); d != filepath.Dir(d); d = filepath.Dir(d) {
		if strings.HasPrefix(filepath.Base(d), "go-build") {
			return true
		}
	}
	return false
}

// isCacheEntry reports whether entry, in a directory named shard, is a build
// cache entry of a linked binary: a hex action hash ending in "-d" whose
// first two digits are the shard.
func isCacheEntry(entry, shard string) bool {
	hash, ok := strings.CutSuffix(entry, "-d")
	if !ok || len(hash) < 32 || len(shard) != 2 || !strings.HasPrefix(hash, shard) {
		return false
	}
	for _, c := range hash {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}
