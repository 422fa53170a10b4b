package workspace

import (
	"context"
	"sync/atomic"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/tools"
)

// plan is what one execute works from, gathered once and passed down to
// the plan checks, the run and its capability calls: the configuration and
// local tools as they were when it started, the routing rules, the
// package's own analysis of the code and the execution's grants. Reading
// .pml.json, asking for the rules and analysing again at every step would
// cost a stat, a lock or a gateway round trip each, and could see a
// different configuration halfway through one execution.
type plan struct {
	cfg    Config
	local  *tools.Mux
	rules  routing.Rules
	an     *analysis.Analysis
	grants *grants
	// toolsKnown is set once the plan's static tools were checked against
	// what this machine, the gateway and the catalog serve.
	toolsKnown bool
}

// lookups counts the costly lookups a plan is built from, so a test can
// hold each to once per execute.
type lookups struct {
	config   atomic.Int64 // refreshConfig
	analyses atomic.Int64 // Analyze of an execute's code
	rules    atomic.Int64 // routingRules
	permKeys atomic.Int64 // warnPermissions comparing the permissions with the last checked
	// secretChecks counts holdsSecret running the sanitizer's rules.
	secretChecks atomic.Int64
}

// readConfig fills the plan's configuration and local tools. A malformed
// .pml.json is the error every execute reports.
func (p *Workspace) readConfig(pl *plan) error {
	cfg, local, err := p.refreshConfig()
	pl.cfg, pl.local = cfg, local
	return err
}

// analyse fills the plan's analysis of code.
func (p *Workspace) analyse(pl *plan, code string) error {
	p.lookups.analyses.Add(1)
	an, err := p.analyzer.Analyze(code)
	pl.an = an
	return err
}

// readRules fills the plan's routing rules.
func (p *Workspace) readRules(ctx context.Context, pl *plan) {
	pl.rules = p.routingRules(ctx)
}

// serverOnly reports whether the plan's static tools all run on the gateway.
func (pl *plan) serverOnly() bool {
	return pl.rules.Resolve(pl.an.Tools) == routing.Server && !pl.an.Dynamic
}
