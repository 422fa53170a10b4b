// Package procenv builds the environment of the processes the package
// starts (shell commands, local MCP servers): a minimal base taken from the
// package's own environment, plus exactly what the user configured. The
// package's environment holds its gateway key (PML_API_KEY) and whatever the
// user's shell exported; a child gets none of it unless it is listed.
package procenv

import (
	"maps"
	"runtime"
	"slices"
	"strings"
)

// baseNames are the variables every child keeps: what a POSIX shell, a
// package manager (npx, uvx) and a locale-aware program need to run, and on
// Windows what the system needs to start a process at all.
var baseNames = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TMPDIR", "TZ",
	// Windows.
	"SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP", "USERPROFILE",
	"APPDATA", "LOCALAPPDATA", "HOMEDRIVE", "HOMEPATH",
}

// BaseNames returns the names of the minimal base, sorted; LC_* (every
// locale category) is kept too.
func BaseNames() []string {
	out := append(slices.Clone(baseNames), "LC_*")
	slices.Sort(out)
	return out
}

// inBase reports whether name belongs to the minimal base.
func inBase(name string) bool {
	if runtime.GOOS == "windows" {
		name = strings.ToUpper(name) // Windows names are case-insensitive
	}
	return strings.HasPrefix(name, "LC_") || slices.Contains(baseNames, name)
}

// Build returns the minimal base of environ (KEY=VALUE entries, as from
// os.Environ) followed by extra, sorted by name. A name in extra replaces
// the base's value rather than following it, so no child sees two.
func Build(environ []string, extra map[string]string) []string {
	out := make([]string, 0, len(baseNames)+len(extra))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || !inBase(name) {
			continue
		}
		if _, replaced := extra[name]; replaced {
			continue
		}
		out = append(out, kv)
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		out = append(out, k+"="+extra[k])
	}
	return out
}
