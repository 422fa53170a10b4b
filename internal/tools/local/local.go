// Package local holds the package's built-in client tools: filesystem
// operations confined to the workspace, and shell commands run in it. They
// run on the user's machine (client-routed), behind the package's
// permission checks.
package local

import (
	"path/filepath"
	"slices"
	"time"

	"github.com/pml-go/pml/internal/tools"
)

// Namespaces returns the namespaces New serves, sorted.
func Namespaces() []string { return []string{"filesystem", "shell"} }

// Defaults of the Options.
const (
	DefaultShellTimeout = 30 * time.Second
	DefaultOutputLimit  = 1 << 20  // bytes kept of each of stdout and stderr
	DefaultMaxReadSize  = 10 << 20 // bytes read_file returns at most
)

// maxShellTimeout caps timeout_ms so a snippet cannot park a process forever.
const maxShellTimeout = 10 * time.Minute

// Option configures New.
type Option func(*workspace)

// WithShellTimeout sets the shell:exec timeout used when the call gives none.
func WithShellTimeout(d time.Duration) Option { return func(w *workspace) { w.shellTimeout = d } }

// WithOutputLimit sets how many bytes of each of stdout and stderr
// shell:exec keeps; the rest is dropped and the result marked truncated.
func WithOutputLimit(n int) Option { return func(w *workspace) { w.outputLimit = n } }

// WithMaxReadSize sets the largest file read_file returns.
func WithMaxReadSize(n int64) Option { return func(w *workspace) { w.maxRead = n } }

// WithShellEnv names the variables shell:exec passes on beyond the minimal
// base (procenv), with lookup giving their values; a name lookup does not
// find is left out.
func WithShellEnv(names []string, lookup func(string) (string, bool)) Option {
	return func(w *workspace) { w.shellEnv, w.lookupEnv = slices.Clone(names), lookup }
}

// workspace is the configuration every tool shares. The directory is
// resolved on each call, so a workspace created or moved after New works.
type workspace struct {
	dir          string // absolute, as configured
	shellTimeout time.Duration
	outputLimit  int
	maxRead      int64
	shellEnv     []string // names passed to shell:exec beyond the minimal base
	lookupEnv    func(string) (string, bool)
}

// New returns the provider of the filesystem and shell tools, confined to
// workspace. A relative workspace is taken from the current directory.
func New(workspace string, opts ...Option) *tools.Table {
	w := newWorkspace(workspace, opts...)
	return tools.NewTable(slices.Concat(w.filesystemTools(), w.shellTools())...)
}

func newWorkspace(dir string, opts ...Option) *workspace {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir) // Abs fails only without a cwd; calls will then report the workspace missing
	}
	w := &workspace{dir: abs, shellTimeout: DefaultShellTimeout, outputLimit: DefaultOutputLimit, maxRead: DefaultMaxReadSize}
	for _, o := range opts {
		o(w)
	}
	return w
}
