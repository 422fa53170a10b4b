package workspace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/pml-go/pml/internal/admission"
	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/atomicfile"
	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/lru"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/rawio"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/runner"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/secretmask"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tools/local"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/upstream"
	"github.com/pml-go/pml/internal/wire"
	"github.com/pml-go/pml/internal/workers"
)

// Options build a Workspace.
type Options struct {
	Workspace string
	Gateway   gatewayclient.Gateway
	Logger    *slog.Logger
	Limits    sandbox.Limits
	// IdleTimeout stops local MCP servers unused this long (default 5 min).
	IdleTimeout time.Duration
	// RulesTTL bounds how long fetched routing rules are reused (default 1 min).
	RulesTTL time.Duration
	// Now is the clock of pending workflows' TTL (tests inject one).
	Now func() time.Time
	// TraceSync tunes the delivery of traces to the gateway (tests shorten
	// its backoff); zero fields take tracing's defaults.
	TraceSync tracing.SyncOptions
	// Admission bounds the local runs at once; nil: the defaults for Limits,
	// with no per-tenant cap (the package serves one).
	Admission *admission.Controller
	// Analyzer analyses the code of executions and capabilities; nil: the
	// package's own. Local mode shares one with the in-process gateway.
	Analyzer *analysis.Analyzer
}

// analyzerEntries is how many analyses the package's analyser caches: a
// local-mode one serves the in-process gateway too.
const analyzerEntries = 4096

// Workspace is PML for one workspace: the MCP server its AI client talks
// to (the "package" of docs/architecture.md), its local tools and servers,
// its approvals and the runs on this machine.
type Workspace struct {
	ws        string
	gw        gatewayclient.Gateway
	log       *slog.Logger
	analyzer  *analysis.Analyzer
	validate  *tools.Validator // arguments of capabilities called here
	env       *approval.Env
	pool      *upstream.Pool
	builtins  tools.Provider
	rulesTTL  time.Duration
	workflows *approval.Store[pendingRun]
	deps      *approval.Deps
	traces    *traceSync
	runner    *runner.Runner // runs code: admission, sandbox, traces
	lookups   lookups        // what executes cost, for the tests
	expose    []string       // capabilities exposed as tools beyond .pml.json's

	// Local runs outlive the execute that started them when they park;
	// closing ends them (CANCELLED) and waits for them.
	closing    context.Context
	closeNow   context.CancelFunc
	runs       sync.WaitGroup
	runWorkers *workers.Pool // the goroutines runs go on

	mu       sync.Mutex
	cfg      Config
	cfgErr   error
	cfgStamp fileStamp
	stater   *rawio.Stater // stats the workspace's files
	// permsChecked is the permissions and servers warnPermissions last
	// checked, so each set is warned about once.
	permsChecked string
	permsLocal   *tools.Mux                       // the local tools of the configuration permsChecked came from
	applied      map[string]upstream.ServerConfig // servers currently in the pool, as started
	missing      map[string][]string              // server -> ${VAR}s set nowhere
	local        *tools.Mux
	localNS      []string // local's namespaces: always routed here
	rules        routing.Rules
	rulesAt      time.Time
	haveRules    bool
	reported     string // tool ids last reported to the gateway
	catalog      map[string]catalogLookup
	learning     sync.WaitGroup     // background capability reports
	learned      map[string]*report // code hashes reported this session

	cfgWrite sync.Mutex // serializes the package's own edits of .pml.json ("always")
	recordMu sync.Mutex // serializes this process's writes of the server records

	secretChecks *lru.Cache[secretCheck, bool] // holdsSecret's answers

	secretMu   sync.Mutex // guards the secret filters, rebuilt when the values change
	secretVals []string
	sanitizer  *tracing.Sanitizer
	answerMask *secretmask.Set
}

// stopGrace is how long a local server gets to exit after its stdin closes,
// and again after SIGTERM. Servers exit at once on EOF; one stuck in a call
// would otherwise hold up the package's exit when the AI client quits.
const stopGrace = 500 * time.Millisecond

// New builds a Workspace. It starts nothing: local servers start on first use.
func New(o Options) (*Workspace, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.RulesTTL == 0 {
		o.RulesTTL = time.Minute
	}
	ws, err := filepath.Abs(o.Workspace)
	if err != nil {
		return nil, err
	}
	deps, err := approval.OpenDeps(ws)
	if err != nil {
		return nil, err
	}
	p := &Workspace{
		ws:        ws,
		gw:        o.Gateway,
		log:       o.Logger,
		analyzer:  o.Analyzer,
		validate:  tools.NewValidator(),
		env:       approval.NewEnv(ws),
		builtins:  local.New(ws),
		rulesTTL:  o.RulesTTL,
		workflows: approval.NewStore[pendingRun](approval.DefaultTTL, o.Now),
		deps:      deps,
		applied:   map[string]upstream.ServerConfig{},
		catalog:   map[string]catalogLookup{},
		learned:   map[string]*report{},

		secretChecks: lru.New[secretCheck, bool](secretChecksEntries, secretChecksBytes),
		runWorkers:   workers.New(),
		stater:       rawio.NewStater(ws),
	}
	p.pool = upstream.NewPool(upstream.Options{IdleTimeout: o.IdleTimeout, StopGrace: stopGrace, Logger: o.Logger, MinimalEnv: true,
		OnStart: p.noteServerStart, OnTools: p.noteServerTools})
	p.closing, p.closeNow = context.WithCancel(context.Background())
	if p.analyzer == nil {
		p.analyzer = analysis.New(512)
	}
	adm := o.Admission
	if adm == nil {
		adm = admission.New(admission.Limits{MaxExecutionsPerTenant: -1}, o.Limits)
	}
	p.runner = &runner.Runner{Admission: adm, Limits: o.Limits, Local: true}
	if p.traces, err = startTraceSync(ws, o.Gateway, o.TraceSync, o.Logger); err != nil {
		return nil, err
	}
	p.refreshConfig()
	return p, nil
}

// Workspace returns the package's workspace root.
func (p *Workspace) Workspace() string { return p.ws }

// Close ends the local runs still going (parked ones too), delivers the
// queued traces (one bounded attempt), then stops every local server and
// the gateway connection.
func (p *Workspace) Close() error {
	p.closeNow()
	p.runs.Wait()
	p.runWorkers.Close()
	p.learning.Wait()
	return errors.Join(p.traces.close(), p.pool.Close(), p.gw.Close())
}

type fileStamp struct {
	mod  time.Time
	size int64
	ok   bool
}

// stampOf stats path, a file of the workspace, with the workspace's
// Stater (rawio: .pml.json is stated on every execution).
func (p *Workspace) stampOf(path string) fileStamp {
	size, mod, err := p.stater.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{mod: mod, size: size, ok: true}
}

// refreshConfig reloads .pml.json when it changed and applies its servers.
// A malformed file is kept as an error that every execute reports, naming
// the file, while the package keeps serving.
func (p *Workspace) refreshConfig() (Config, *tools.Mux, error) {
	p.lookups.config.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	path := filepath.Join(p.ws, ConfigFile)
	stamp := p.stampOf(path)
	if p.local != nil && stamp == p.cfgStamp {
		return p.cfg, p.local, p.cfgErr
	}
	p.cfgStamp = stamp
	cfg, err := LoadConfig(path)
	if err != nil {
		// Logged once per problem: the same error again (a rebuild of the
		// local tools, a touched file) is not news.
		if p.cfgErr == nil || p.cfgErr.Error() != err.Error() {
			p.log.Error("config", "err", err)
		}
		p.cfgErr = err
		if p.local == nil {
			p.setLocal(p.buildLocal(nil))
		}
		return p.cfg, p.local, err
	}
	p.cfg, p.cfgErr = cfg, nil
	if err := p.env.Reload(); err != nil {
		p.log.Warn("reading .env", "err", err)
	}
	p.builtins = local.New(p.ws, local.WithShellEnv(cfg.Shell.Env, p.env.Lookup))
	p.setLocal(p.buildLocal(p.withDeps(cfg.MCPServers)))
	return p.cfg, p.local, nil
}

// setLocal installs the local tools and tells the gateway client which
// namespaces they serve: the package routes those here whatever the
// gateway's rules or registry say, and the gateway is told so with every
// request, so its analysis agrees (docs/security.md "Tenants and names"). Called with
// p.mu held.
func (p *Workspace) setLocal(local *tools.Mux) {
	p.local, p.localNS = local, local.Namespaces()
	p.gw.SetClientNamespaces(p.localNS)
}

// withDeps adds the installed dependencies (.pml/deps.json) to the
// configured servers; a configured server of the same name wins.
func (p *Workspace) withDeps(servers map[string]ServerConfig) map[string]ServerConfig {
	out := map[string]ServerConfig{}
	for _, rec := range p.deps.List() {
		// The configured environment as it is: literals are the server's
		// config, ${VAR}s the user's keys. A record from before the
		// environment was recorded passes each key under its own name.
		env := maps.Clone(rec.Env)
		if env == nil {
			env = map[string]string{}
			for _, k := range rec.EnvRequired {
				env[k] = "${" + k + "}"
			}
		}
		out[rec.Name] = ServerConfig{Command: rec.Command, Args: rec.Args, Env: env}
	}
	for name, sc := range servers {
		out[name] = sc
	}
	return out
}

// invalidateLocal makes the next refreshConfig rebuild the local tools
// (after an install or a .env change).
func (p *Workspace) invalidateLocal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cfgStamp = fileStamp{mod: time.Unix(0, 0), ok: true, size: -1}
}

// buildLocal returns the mux of client tools: the built-ins and pml:admin
// (adminProvider), replaced namespace by namespace by configured servers.
func (p *Workspace) buildLocal(servers map[string]ServerConfig) *tools.Mux {
	m := tools.NewMux().WithLogger(p.log)
	for _, ns := range local.Namespaces() {
		m.Register(ns, p.builtins)
	}
	m.Register(AdminNamespace, adminProvider{p})
	p.missing = map[string][]string{}
	for name := range p.applied {
		if _, keep := servers[name]; !keep {
			p.pool.Remove(name)
			delete(p.applied, name)
		}
	}
	for name, sc := range servers {
		cfg, missing := sc.upstreamConfig(name, p.ws, p.env)
		if len(missing) > 0 {
			p.missing[name] = missing
		}
		// Compare the expanded config: a .env edit changes a ${VAR} without
		// changing .pml.json, and the server must restart with the new value.
		if prev, ok := p.applied[name]; !ok || !reflect.DeepEqual(prev, cfg) {
			p.pool.Add(cfg)
			p.applied[name] = cfg
		}
		srv, _ := p.pool.Server(name)
		m.Register(name, srv)
	}
	return m
}

// routingRules returns the gateway's rules, refreshed at most every RulesTTL;
// when the gateway is unreachable, the last known (or cached) rules. The
// namespaces served here are pinned to the client (routing.Rules.Local).
func (p *Workspace) routingRules(ctx context.Context) routing.Rules {
	p.lookups.rules.Add(1)
	p.mu.Lock()
	if p.haveRules && time.Since(p.rulesAt) < p.rulesTTL {
		defer p.mu.Unlock()
		return p.rules.WithLocal(p.localNS)
	}
	p.mu.Unlock()
	rules, err := p.gw.Routing(ctx)
	if err != nil {
		p.log.Debug("routing rules: using cached", "err", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil || !p.haveRules {
		p.rules, p.rulesAt, p.haveRules = rules, time.Now(), true
	}
	return p.rules.WithLocal(p.localNS)
}

// clientID identifies this workspace's package to the gateway, persisted in
// .pml/client-id.
func (p *Workspace) clientID() string {
	path := filepath.Join(p.ws, StateDir, "client-id")
	if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
		return string(b)
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	if err := writeFileAtomic(path, []byte(id)); err != nil {
		p.log.Warn("saving client id", "err", err)
	}
	return id
}

// ReportTools tells the gateway which tools this machine has, so its
// analysis and discover know them as client tools. It lists the built-ins
// and the local servers already running: starting every configured server
// just to list its tools would defeat their lazy start. Discover, which
// lists (and so starts) them all for the AI client, reports the rest.
func (p *Workspace) ReportTools(ctx context.Context) error {
	_, local, _ := p.refreshConfig()
	list, err := p.startedOnly(local).Tools(ctx)
	if err != nil {
		return err
	}
	return p.reportTools(ctx, list)
}

// startedOnly is local without the local servers that are not running.
func (p *Workspace) startedOnly(local *tools.Mux) *tools.Mux {
	m := tools.NewMux().WithLogger(p.log)
	for _, ns := range local.Namespaces() {
		prov, _ := local.Provider(ns)
		if srv, ok := prov.(*upstream.Server); ok && !srv.Running() {
			continue
		}
		m.Register(ns, prov)
	}
	return m
}

// reportTools sends list to the gateway unless it was the last list sent.
func (p *Workspace) reportTools(ctx context.Context, list []tools.Info) error {
	ids := make([]string, len(list))
	out := make([]wire.ClientTool, len(list))
	for i, t := range list {
		ids[i] = t.ID
		out[i] = wire.ClientTool{ID: t.ID, Description: t.Description, InputSchema: t.InputSchema}
	}
	key := strings.Join(ids, "\n")
	p.mu.Lock()
	same := p.reported == key
	p.mu.Unlock()
	if same {
		return nil
	}
	if err := p.gw.ReportTools(ctx, p.clientID(), out); err != nil {
		return err
	}
	p.mu.Lock()
	p.reported = key
	p.mu.Unlock()
	return nil
}

func newWorkflowID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func isNetworkError(err error) bool { return pmlerr.CodeOf(err, "") == pmlerr.NetworkError }

// writeFileAtomic writes the package's small state files (ids, configs) so
// readers never see a torn file.
func writeFileAtomic(path string, data []byte) error {
	return atomicfile.Write(path, data, atomicfile.Fast)
}
