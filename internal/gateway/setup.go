package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pml-go/pml/internal/admission"
	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/gateway/traceapi"
	"github.com/pml-go/pml/internal/jsonkeys"
	"github.com/pml-go/pml/internal/learning"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/storeopen"
	"github.com/pml-go/pml/internal/telemetry"
	"github.com/pml-go/pml/internal/tokenauth"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tools/local"
	"github.com/pml-go/pml/internal/tools/std"
	"github.com/pml-go/pml/internal/upstream"
)

// FileConfig is `pml gateway --config FILE`.
type FileConfig struct {
	Servers map[string]ServerEntry `json:"servers"`
	Routing *routing.Rules         `json:"routing,omitempty"`
	// OAuth makes the gateway accept access tokens of OpenID issuers
	// beside its API keys (docs/auth.md).
	OAuth *tokenauth.Config `json:"oauth,omitempty"`
	// Global configures the global layer of procedural memory; nil takes
	// its defaults.
	Global *GlobalLayer `json:"global,omitempty"`
}

// GlobalLayer is the global layer's policy (docs/how-it-works.md "The
// global layer", docs/configuration.md).
type GlobalLayer struct {
	// K is how many distinct orgs must share an edge of the tool graph, or
	// have typed a tool's results, before every tenant sees it: nil is
	// learning.DefaultGlobalK, 0 turns the layer off, 1 is refused (one
	// org's habit would show).
	K *int `json:"k,omitempty"`
	// OptOut names the tenants that contribute nothing, "org" (every
	// project of it) or "org/project"; they still see the global layer.
	OptOut []string `json:"opt_out,omitempty"`
}

// Validate refuses a K of 1 or less than 0 and an opt-out that names no
// tenant.
func (g *GlobalLayer) Validate() error {
	if g == nil {
		return nil
	}
	if g.K != nil && (*g.K < 0 || *g.K == 1) {
		return fmt.Errorf("global: k %d: want 0 (off) or at least 2", *g.K)
	}
	for _, o := range g.OptOut {
		if _, err := optOutScope(o); err != nil {
			return err
		}
	}
	return nil
}

// optOutScope reads "org" or "org/project"; a Scope without Project is
// every project of its Org.
func optOutScope(s string) (store.Scope, error) {
	org, project, _ := strings.Cut(s, "/")
	if org == "" || strings.Contains(project, "/") || strings.HasSuffix(s, "/") {
		return store.Scope{}, fmt.Errorf("global: opt_out %q: want \"org\" or \"org/project\"", s)
	}
	return store.Scope{Org: org, Project: project}, nil
}

// learning is the learner's policy of g with common telling which tools
// every tenant sees.
func (g *GlobalLayer) learning(common func(string) bool) learning.GlobalConfig {
	cfg := learning.GlobalConfig{K: learning.DefaultGlobalK, Common: common}
	if g == nil {
		return cfg
	}
	if g.K != nil {
		cfg.K = *g.K
	}
	for _, o := range g.OptOut {
		sc, _ := optOutScope(o) // validated
		cfg.OptOut = append(cfg.OptOut, sc)
	}
	return cfg
}

// ServerEntry is one upstream MCP server. A hosted one runs on the gateway;
// any other is a catalog entry that packages install and run locally.
type ServerEntry struct {
	upstream.ServerConfig
	Hosted      bool   `json:"hosted"`
	Description string `json:"description,omitempty"`
}

// LoadConfig reads and validates a gateway config file. Every refusal is an
// INVALID_CONFIG; an unknown key is one, naming the closest valid key, so a
// typo cannot silently drop a setting.
func LoadConfig(path string) (FileConfig, error) {
	var cfg FileConfig
	data, err := os.ReadFile(path)
	if err != nil {
		return cfg, pmlerr.Wrap(pmlerr.InvalidConfig, fmt.Errorf("gateway config: %w", err))
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return cfg, pmlerr.Wrap(pmlerr.InvalidConfig, fmt.Errorf("gateway config %s: %w", path, err))
	}
	if err := jsonkeys.Check(data, &cfg); err != nil {
		return cfg, pmlerr.Wrap(pmlerr.InvalidConfig, fmt.Errorf("gateway config %s: %w", path, err))
	}
	if err := cfg.validate(path); err != nil {
		return cfg, pmlerr.Wrap(pmlerr.InvalidConfig, err)
	}
	return cfg, nil
}

func (c FileConfig) validate(path string) error {
	if c.OAuth != nil {
		if err := c.OAuth.Validate(); err != nil {
			return fmt.Errorf("gateway config %s: %w", path, err)
		}
	}
	if c.Routing != nil {
		if err := c.Routing.Validate(); err != nil {
			return fmt.Errorf("gateway config %s: %w", path, err)
		}
	}
	if err := c.Global.Validate(); err != nil {
		return fmt.Errorf("gateway config %s: %w", path, err)
	}
	for name, s := range c.Servers {
		switch {
		case name == "" || !validNamespace(name):
			return fmt.Errorf("gateway config %s: server name %q: use letters, digits, _ and -", path, name)
		case slices.Contains(std.Namespaces(), name):
			return fmt.Errorf("gateway config %s: server %q clashes with a built-in namespace", path, name)
		case s.serverType() == "stdio" && s.Command == "":
			return fmt.Errorf("gateway config %s: server %q: stdio needs a command", path, name)
		case !slices.Contains(upstream.Types, s.serverType()):
			return fmt.Errorf("gateway config %s: server %q: type must be one of %s, not %q", path, name, strings.Join(upstream.Types, ", "), s.Type)
		case s.serverType() != "stdio" && s.URL == "":
			return fmt.Errorf("gateway config %s: server %q: %s needs a url", path, name, s.serverType())
		case s.Auth != nil && !s.Hosted:
			return fmt.Errorf("gateway config %s: server %q: auth needs \"hosted\": true (packages run catalog entries, and get no gateway credentials)", path, name)
		}
		if s.Auth != nil {
			if err := s.Auth.Validate(s.serverType()); err != nil {
				return fmt.Errorf("gateway config %s: server %q: %w", path, name, err)
			}
		}
	}
	return nil
}

func (s ServerEntry) serverType() string {
	if s.Type != "" {
		return s.Type
	}
	if s.URL != "" {
		return "http"
	}
	return "stdio"
}

func validNamespace(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// Options open a complete gateway.
type Options struct {
	DB     string // SQLite path or postgres:// URL
	Config FileConfig
	Logger *slog.Logger
	Limits sandbox.Limits
	// Admission bounds the executions run at once (docs/limits.md "Admission and overload"); nil: the defaults for Limits.
	Admission *admission.Controller
	// Retention is the trace retention policy; nil takes
	// traceapi.DefaultRetention (local mode does).
	Retention *traceapi.Retention
	// TraceIngest bounds what each tenant posts to POST /api/traces per
	// minute (docs/limits.md "What a posted trace may say"); nil takes
	// traceapi.DefaultIngestLimits.
	TraceIngest *traceapi.IngestLimits
	// Analyzer analyses the code of executions and capabilities; nil: one
	// of the gateway's own. Local mode passes the package's, so code the
	// package analysed is not analysed again (one cache for both).
	Analyzer *analysis.Analyzer
	// OwnDiscovers: learning from use learns from this process's discovers
	// only (learning.Config.OwnDiscovers); local mode sets it.
	OwnDiscovers bool
	// Busy counts the gateway's background work, learning and trace
	// retention passes, as work in flight (learning.Config.Busy,
	// traceapi.Config.Busy); nil: not counted. pml gateway passes its
	// procscale.Scaler's Begin.
	Busy func() (end func())
}

// analyzerEntries is how many analyses the gateway's analyser caches.
const analyzerEntries = 4096

// Open assembles a gateway Service from its options: the store, the
// built-in tools, the hosted servers and the effective routing rules. The
// returned closer stops hosted servers and closes the store.
func Open(ctx context.Context, o Options) (*Service, io.Closer, error) {
	metrics := NewMetrics()
	var tokens *tokenauth.Verifier
	if o.Config.OAuth != nil {
		v, err := tokenauth.New(*o.Config.OAuth, tokenauth.Options{OnRefetchRefused: metrics.KeyRefetchRefused.Inc})
		if err != nil {
			return nil, nil, pmlerr.Wrap(pmlerr.InvalidConfig, fmt.Errorf("gateway config: %w", err))
		}
		tokens = v
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	policy := traceapi.DefaultRetention()
	if o.Retention != nil {
		policy = *o.Retention
	}
	if err := policy.Validate(); err != nil {
		return nil, nil, err
	}
	ingest := traceapi.DefaultIngestLimits()
	if o.TraceIngest != nil {
		ingest = *o.TraceIngest
	}
	if err := ingest.Validate(); err != nil {
		return nil, nil, pmlerr.Wrap(pmlerr.InvalidConfig, err)
	}
	if err := o.Config.Global.Validate(); err != nil {
		return nil, nil, pmlerr.Wrap(pmlerr.InvalidConfig, err)
	}
	st, err := storeopen.Open(ctx, o.DB)
	if err != nil {
		return nil, nil, fmt.Errorf("open store: %w", err)
	}
	tel, err := telemetry.FromEnv(ctx, "pml-gateway")
	if err != nil {
		log.Warn("OpenTelemetry export disabled", "err", err)
	}
	pool := upstream.NewPool(upstream.Options{Logger: log, OnStart: metrics.UpstreamStarted})
	mux := tools.NewMux()
	stdTools := std.New()
	for _, ns := range std.Namespaces() {
		mux.Register(ns, stdTools)
	}
	rules := routing.Default()
	if o.Config.Routing != nil {
		rules = rules.Override(*o.Config.Routing)
	}
	catalog := map[string]ServerEntry{}
	byok := map[string]upstream.ServerConfig{}
	hostedEntries := map[string]ServerEntry{}
	var hosted []string
	for name, entry := range o.Config.Servers {
		cfg := entry.ServerConfig
		cfg.Name = name
		cfg.Type = entry.serverType()
		if !entry.Hosted {
			entry.ServerConfig = cfg
			catalog[name] = entry
			continue
		}
		hosted = append(hosted, name)
		entry.ServerConfig = cfg
		hostedEntries[name] = entry
		if len(envRequired(cfg)) > 0 {
			byok[name] = cfg // started per call with the caller's keys
			continue
		}
		mux.Register(name, pool.Add(cfg))
	}
	slices.Sort(hosted)
	analyzer := o.Analyzer
	if analyzer == nil {
		analyzer = analysis.New(analyzerEntries)
	}
	svc := New(Config{
		Store:        st,
		Rules:        rules.WithServer(slices.Concat(std.Namespaces(), hosted)...),
		Tools:        mux,
		Catalog:      catalog,
		BYOK:         byok,
		Hosted:       hostedEntries,
		Upstream:     pool,
		Limits:       o.Limits,
		Analyzer:     analyzer,
		Logger:       log,
		Metrics:      metrics,
		Telemetry:    tel,
		Admission:    o.Admission,
		Retention:    &policy,
		TraceIngest:  ingest,
		Tokens:       tokens,
		Busy:         o.Busy,
		Global:       o.Config.Global.learning(commonTools(ctx, stdTools, o.Config.Servers)),
		OwnDiscovers: o.OwnDiscovers,
	})
	if err := svc.learner.Withdraw(ctx); err != nil {
		svc.learner.Close()
		return nil, nil, errors.Join(fmt.Errorf("global layer: withdrawing the opted-out tenants' contributions: %w", err),
			pool.Close(), st.Close(), shutdownTelemetry(tel))
	}
	pruneCtx, stopPruning := context.WithCancel(context.WithoutCancel(ctx))
	pruned := make(chan struct{})
	go func() {
		defer close(pruned)
		svc.traces.RunRetention(pruneCtx)
	}()
	return svc, closerFunc(func() error {
		stopPruning()
		<-pruned
		svc.learner.Close()
		return errors.Join(pool.Close(), st.Close(), shutdownTelemetry(tel))
	}), nil
}

// shutdownTelemetry sends the spans still buffered, bounded so a dead
// collector cannot hold up a shutdown.
func shutdownTelemetry(tel *telemetry.Exporter) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return tel.Shutdown(ctx)
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// CatalogEntry is a non-hosted stdio server of the catalog: what a package
// installs and runs locally, named and hashed like a registry entry.
type CatalogEntry struct {
	Type        string              `json:"type"` // stdio: installed locally; http: a BYOK server the gateway runs
	EnvRequired []string            `json:"envRequired,omitempty"`
	FQDN        string              `json:"fqdn"`
	Integrity   string              `json:"integrity"`
	Description string              `json:"description,omitempty"`
	Install     approval.Dependency `json:"install"`
}

// CatalogServer returns a server of the registry by name: a stdio entry
// packages install, or an http entry the gateway runs (whose envRequired are
// the BYOK keys the package sends with each call). Name and integrity are the
// registry's (GET /mcp/pml.mcp.<name>.server), so a changed command, argument
// list or key list is a new hash the package's lockfile notices.
func (s *Service) CatalogServer(name string) (CatalogEntry, bool) {
	m, ok := s.registry.ServerMetadata(name)
	if !ok {
		return CatalogEntry{}, false
	}
	e := CatalogEntry{Type: string(m.Type), EnvRequired: m.EnvRequired, FQDN: m.FQDN, Integrity: m.Integrity, Description: m.Description}
	if in := m.Install; in != nil {
		e.EnvRequired = in.EnvRequired
		e.Install = approval.Dependency{Name: name, Command: in.Command, Args: in.Args, Env: in.Env, EnvRequired: in.EnvRequired}
	}
	return e, true
}

// commonTools reports the tools every tenant sees, the only ones the
// global layer takes in (docs/security.md "Tenants and names"): the
// built-in tools of the gateway and of the package, by their exact ids,
// and any tool of the servers of the gateway's config. A tenant's own
// servers are not identified across tenants (the same name may be another
// server), so they stay out.
func commonTools(ctx context.Context, std *tools.Table, servers map[string]ServerEntry) func(string) bool {
	ids := map[string]bool{}
	for _, t := range []*tools.Table{std, local.New(".")} {
		list, _ := t.Tools(ctx) // a table's list never fails
		for _, info := range list {
			ids[info.ID] = true
		}
	}
	return func(id string) bool {
		if ids[id] {
			return true
		}
		ns, action := tools.Split(id)
		_, ok := servers[ns]
		return ok && action != ""
	}
}
