package workspace

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"time"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/pmlerr"
	regclient "github.com/pml-go/pml/internal/registry/client"
)

// install records an approved dependency so it runs locally from now on.
// Its command must exist on this machine; progress goes to the log (stderr).
func (p *Workspace) install(ctx context.Context, dep approval.Dependency) error {
	if rec, ok := p.deps.Installed(dep.Name); ok && rec.Command == dep.Command &&
		slices.Equal(rec.Args, dep.Args) && maps.Equal(rec.Env, dep.Env) && slices.Equal(rec.EnvRequired, dep.EnvRequired) {
		return nil
	}
	p.log.Info("installing MCP server", "server", dep.Name, "command", dep.Command, "args", dep.Args)
	if _, err := exec.LookPath(dep.Command); err != nil {
		return pmlerr.New(pmlerr.ToolError, "cannot install %s: %q is not on this machine's PATH", dep.Name, dep.Command).With("server", dep.Name)
	}
	if err := p.deps.Record(approval.DepRecord{Name: dep.Name, Version: dep.Version, Command: dep.Command,
		Args: dep.Args, Env: dep.Env, EnvRequired: dep.EnvRequired, InstalledAt: time.Now().UTC()}); err != nil {
		return fmt.Errorf("recording %s in deps.json: %w", dep.Name, err)
	}
	p.invalidateLocal()
	p.log.Info("installed MCP server", "server", dep.Name)
	return nil
}

// dependencyOf is what installing a verified stdio catalog entry records.
func dependencyOf(name string, e regclient.Entry) (approval.Dependency, error) {
	in := e.Metadata.Install
	if in == nil || in.Command == "" {
		return approval.Dependency{}, pmlerr.New(pmlerr.ToolError, "catalog entry %s has no install command", e.FQDN).With("server", name)
	}
	return approval.Dependency{Name: name, Command: in.Command, Args: in.Args, Env: in.Env, EnvRequired: in.EnvRequired}, nil
}
