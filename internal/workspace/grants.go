package workspace

import (
	"context"
	"path"
	"strings"
	"sync"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/tools/local"
)

// grants are the approvals of one execution: the tools a person approved
// for it, and the single calls (a secret read, a hook write) approved by
// their arguments. They live in the execution's pending run, across its
// pauses, and die with it: a later execute, or another client's session,
// starts with none. Lasting trust is the allow list of .pml.json, which
// only the person's "always" answer (or their own edit) extends.
type grants struct {
	mu        sync.Mutex
	tools     map[string]bool
	calls     map[string]bool // callKey(tool, args hash)
	revealEnv bool            // a read of a .env file was approved
}

func newGrants() *grants {
	return &grants{tools: map[string]bool{}, calls: map[string]bool{}}
}

func callKey(tool, argsHash string) string { return tool + "\x00" + argsHash }

// grant records an approved item; other kinds of items are acted on by
// apply and need no record.
func (g *grants) grant(it approval.Item) {
	if it.Type != approval.TypeToolPermission {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !it.Once {
		g.tools[it.Tool] = true
		return
	}
	g.calls[callKey(it.Tool, it.ArgsHash)] = true
	if it.Access == local.KindSecretRead && isDotEnv(it.Path) {
		g.revealEnv = true
	}
}

func (g *grants) tool(t string) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tools[t]
}

// covers reports whether the execution already approved what it asks: a
// call that asked while another call of its tool was being approved.
func (g *grants) covers(it approval.Item) bool {
	switch {
	case it.Type != approval.TypeToolPermission:
		return false
	case it.Once:
		return g.call(it.Tool, it.ArgsHash)
	default:
		return g.tool(it.Tool)
	}
}

// hasCalls reports whether any single call was approved, so the gate only
// hashes arguments when a hash could match.
func (g *grants) hasCalls() bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.calls) > 0
}

func (g *grants) call(tool, argsHash string) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls[callKey(tool, argsHash)]
}

// revealsEnv reports whether the person approved reading a .env file in
// this execution, so its answer may carry .env values unmasked.
func (g *grants) revealsEnv() bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.revealEnv
}

func isDotEnv(p string) bool {
	base := strings.ToLower(path.Base(p))
	return base == ".env" || strings.HasPrefix(base, ".env.")
}

type grantsKey struct{}

// withGrants makes g the grants the permission gate consults for calls made
// under ctx (the run's calls, and those of capabilities nested in it).
func withGrants(ctx context.Context, g *grants) context.Context {
	return context.WithValue(ctx, grantsKey{}, g)
}

// grantsFrom returns the grants of ctx; nil (none granted) outside a run.
func grantsFrom(ctx context.Context) *grants {
	g, _ := ctx.Value(grantsKey{}).(*grants)
	return g
}
