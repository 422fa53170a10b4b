package approval

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Env resolves BYOK keys from the process environment and the workspace
// .env, which the HIL flow asks people to edit and Reload re-reads.
//
// Precedence: a non-empty process variable wins over .env, as with dotenv
// tools and docker compose, so a key exported by the shell or CI overrides a
// file without editing it. An empty process variable does not hide a .env
// value: an empty key is no key. The .env values are kept apart from the
// process environment (never exported into it), so a Reload after editing
// .env replaces old values instead of being shadowed by them.
type Env struct {
	path string

	mu  sync.RWMutex
	dot map[string]string
}

// NewEnv returns the Env of workspace. It has read no .env yet: call Reload.
func NewEnv(workspace string) *Env {
	return &Env{path: filepath.Join(workspace, ".env"), dot: map[string]string{}}
}

// Reload re-reads the workspace .env. On error the previous values stay.
func (e *Env) Reload() error {
	vars, err := LoadDotEnv(e.path)
	if err != nil {
		return fmt.Errorf("reload env: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.dot = vars
	return nil
}

// Lookup returns key's value by the precedence described on Env.
func (e *Env) Lookup(key string) (string, bool) {
	pv, pok := os.LookupEnv(key)
	if pv != "" {
		return pv, true
	}
	e.mu.RLock()
	dv, dok := e.dot[key]
	e.mu.RUnlock()
	if dok {
		return dv, true
	}
	return pv, pok
}

// DotEnvValues returns the distinct non-empty values loaded from .env, sorted,
// for the trace sanitizer to redact. Values come only from .env because that
// is where BYOK secrets live; the process environment holds paths and other
// harmless strings that redaction would mangle.
func (e *Env) DotEnvValues() []string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	var out []string
	for _, v := range e.dot {
		if v != "" {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Missing returns the keys, in order and without repeats, that have no
// usable value: unset, blank, or a placeholder such as "xxx", "your-key-here",
// "<key>", "TODO" or "CHANGE_ME" (what templates and `KEY=` lines leave).
func (e *Env) Missing(keys []string) []string {
	var missing []string
	for _, k := range keys {
		if !e.usable(k) && !slices.Contains(missing, k) {
			missing = append(missing, k)
		}
	}
	return missing
}

// Expand replaces each ${NAME} in s with NAME's value and returns the names,
// in order and without repeats, that have no usable value (as for Missing);
// they expand to whatever Lookup gives, usually "". Only the braced form is
// expanded, so "$HOME" in a command line passes through untouched, as does a
// "${" that is not a well-formed reference.
func (e *Env) Expand(s string) (string, []string) {
	var missing []string
	out := refPattern.ReplaceAllStringFunc(s, func(ref string) string {
		name := ref[2 : len(ref)-1]
		if !e.usable(name) && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
		v, _ := e.Lookup(name)
		return v
	})
	return out, missing
}

var refPattern = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*\}`)

// placeholderPattern matches the values key templates ship with.
var placeholderPattern = regexp.MustCompile(`(?i)^(x{2,}|your[-_ ]?(api[-_ ]?)?key.*|<.*>|todo|change[-_]?me|placeholder)$`)

func (e *Env) usable(key string) bool {
	v, _ := e.Lookup(key)
	v = strings.TrimSpace(v)
	return v != "" && !placeholderPattern.MatchString(v)
}
