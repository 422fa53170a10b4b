// Package gateway is the server side of PML: the execute use case (analysis,
// the hybrid routing decision, server-side execution), discover and call, and
// the HTTP surface around them (MCP Streamable HTTP, auth, routing rules,
// health and metrics). The same Service runs in `pml gateway` and, in local
// mode, inside the package process.
package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"slices"

	"github.com/pml-go/pml/internal/admission"
	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/gateway/traceapi"
	"github.com/pml-go/pml/internal/learning"
	"github.com/pml-go/pml/internal/registry"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/runner"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/sanitize"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/telemetry"
	"github.com/pml-go/pml/internal/tokenauth"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tools/local"
	"github.com/pml-go/pml/internal/ttlcache"
	"github.com/pml-go/pml/internal/upstream"
	"github.com/pml-go/pml/internal/wire"
)

// Config is what a Service is built from. cmd/pml assembles it.
type Config struct {
	Store store.Store
	// Rules are the effective routing rules: defaults, the config override,
	// and the hosted servers as server namespaces.
	Rules routing.Rules
	// Tools serves every server-routed tool: the built-in std namespaces and
	// the hosted upstream servers.
	Tools *tools.Mux
	// Catalog holds the non-hosted servers: install metadata for packages.
	Catalog map[string]ServerEntry
	// BYOK holds the hosted servers that need the caller's keys per call.
	BYOK map[string]upstream.ServerConfig
	// Hosted holds every hosted server's entry, for the registry.
	Hosted map[string]ServerEntry
	// Upstream runs the hosted servers that need no caller keys; their
	// states are shown by discover, /healthz and the catalog. Nil: none.
	Upstream *upstream.Pool
	Limits   sandbox.Limits
	Analyzer *analysis.Analyzer
	Logger   *slog.Logger
	Metrics  *Metrics
	// Telemetry exports traces to OpenTelemetry; nil exports nothing.
	Telemetry *telemetry.Exporter
	// Admission bounds the executions run at once; nil: one with the
	// default limits for Limits.
	Admission *admission.Controller
	// Retention is the trace retention policy; nil keeps traces forever.
	Retention *traceapi.Retention
	// TraceIngest bounds what each tenant posts to POST /api/traces per
	// minute; zero: no bound.
	TraceIngest traceapi.IngestLimits
	// Tokens verifies access tokens of trusted OpenID issuers beside the
	// API keys (docs/auth.md); nil: keys only.
	Tokens *tokenauth.Verifier
	// Global is the global layer's policy (docs/how-it-works.md "The
	// global layer"); the zero value turns it off.
	Global learning.GlobalConfig
	// OwnDiscovers is learning.Config.OwnDiscovers (local mode).
	OwnDiscovers bool
	// Busy is learning.Config.Busy and traceapi.Config.Busy: pml gateway's
	// procscale.Scaler.Begin.
	Busy func() (end func())
}

// Service implements the gateway's MCP tools. Safe for concurrent use; it
// keeps no per-request state, so replicas behind a load balancer are
// interchangeable.
type Service struct {
	life      lifecycle
	requests  requestContexts // the HTTP requests MCP calls came in (ownRuns)
	store     store.Store
	rules     routing.Rules
	tools     *tools.Mux
	catalog   map[string]ServerEntry
	limits    sandbox.Limits
	analyzer  *analysis.Analyzer
	log       *slog.Logger
	metrics   *Metrics
	validate  *tools.Validator
	keys      *ttlcache.Cache[string, principal]             // key hash -> its principal
	tokens    *tokenauth.Verifier                            // nil: API keys only
	learned   *ttlcache.Cache[learnKey, *wire.CapabilityRef] // recent runs' capabilities
	telemetry *telemetry.Exporter
	byok      map[string]byokServer
	registry  *registry.Registry
	// secretChecks remembers which served capabilities hold a secret.
	secretChecks *secretChecks
	admission    *admission.Controller
	runner       *runner.Runner
	traces       *traceapi.API
	learner      *learning.Learner
	upstream     *upstream.Pool
	busy         func() (end func()) // Config.Busy
}

// New builds a Service; zero fields of cfg get working defaults.
func New(cfg Config) *Service {
	s := &Service{
		busy:      cfg.Busy,
		store:     cfg.Store,
		rules:     cfg.Rules,
		tools:     cfg.Tools,
		catalog:   cfg.Catalog,
		limits:    cfg.Limits,
		analyzer:  cfg.Analyzer,
		log:       cfg.Logger,
		metrics:   cfg.Metrics,
		telemetry: cfg.Telemetry,
		admission: cfg.Admission,
		upstream:  cfg.Upstream,
		tokens:    cfg.Tokens,
		validate:  tools.NewValidator(),
		keys:      ttlcache.New[string, principal](keyCacheTTL, keyCacheSize),
		learned:   ttlcache.New[learnKey, *wire.CapabilityRef](learnCacheTTL, learnCacheSize),

		secretChecks: newSecretChecks(),
	}
	if s.rules.Default == "" && len(s.rules.Client) == 0 && len(s.rules.Server) == 0 {
		s.rules = routing.Default()
	}
	if s.tools == nil {
		s.tools = tools.NewMux()
	}
	if s.analyzer == nil {
		s.analyzer = analysis.New(1024)
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.metrics == nil {
		s.metrics = NewMetrics()
	}
	if s.catalog == nil {
		s.catalog = map[string]ServerEntry{}
	}
	if s.admission == nil {
		s.admission = admission.New(admission.Limits{}, s.limits)
	}
	s.metrics.watchAdmission(s.admission)
	s.runner = &runner.Runner{Admission: s.admission, Limits: s.limits}
	s.byok = map[string]byokServer{}
	for name, cfg := range cfg.BYOK {
		s.byok[name] = byokServer{cfg: cfg, keys: envRequired(cfg), log: s.log}
	}
	s.registry = s.newRegistry(cfg.Hosted)
	san := sanitize.New(nil)
	s.learner = learning.New(learning.Config{Store: s.store, Registry: s.registry, Analyzer: s.analyzer,
		HasSecret: san.HasSecret, Flag: san.Flag, ArgDoc: s.argDoc, Logger: s.log, Global: cfg.Global,
		OwnDiscovers: cfg.OwnDiscovers, Busy: cfg.Busy})
	s.traces = s.newTraceAPI(cfg.Retention, cfg.TraceIngest)
	return s
}

// argDoc is what argument arg of tool is for (tools.ArgDoc), for the
// parameters learning lifts from it: a tool of this gateway or a built-in
// client tool of the package; "" for any other (a capability, a tool of a
// package's own server). Only the tool's own provider is listed.
func (s *Service) argDoc(ctx context.Context, tool, arg string) string {
	ns, _ := tools.Split(tool)
	var prov tools.Provider
	if p, ok := s.tools.Provider(ns); ok {
		prov = p
	} else if slices.Contains(local.Namespaces(), ns) {
		prov = local.New(".")
	} else {
		return ""
	}
	list, err := prov.Tools(ctx)
	if err != nil {
		return ""
	}
	for _, t := range list {
		if t.ID == tool {
			return tools.ArgDoc(t, arg)
		}
	}
	return ""
}

// Rules returns the effective routing rules.
func (s *Service) Rules() routing.Rules { return s.rules }

// Metrics returns the service's metrics registry.
func (s *Service) Metrics() *Metrics { return s.metrics }

// Admission returns the controller that admits the service's executions.
func (s *Service) Admission() *admission.Controller { return s.admission }

// Learner returns the service's procedural memory (internal/learning).
func (s *Service) Learner() *learning.Learner { return s.learner }

// Store returns the service's store.
func (s *Service) Store() store.Store { return s.store }

// Caller is who sent a request: the key's tenant and whether it is a PML
// package that can run code locally.
type Caller struct {
	Scope store.Scope
	// Role is what the caller may do in Scope (empty: an in-process caller,
	// local mode's package, with every right); Who names it in traces
	// (docs/auth.md).
	Role      tokenauth.Role
	Who       string
	IsPackage bool
	// ClientNamespaces are the namespaces the caller's package serves on its
	// machine (wire.ClientNamespacesHeader): always client tools, never a
	// capability.
	ClientNamespaces []string
	// Pins are the versions of other orgs' capabilities this run may call
	// (wire.ExecuteOptions.Pins): qualified tool id → five-part FQDN.
	Pins map[string]string
	// approvedOnce are the versions of other orgs' skills the person
	// approved for this one run (continueForeign): never what a client
	// sends, which could otherwise approve itself.
	approvedOnce []string
}

// tenant names the caller's scope for admission.
func (c Caller) tenant() string { return c.Scope.Org + "\x00" + c.Scope.Project }

// LocalScope is the tenant of local mode, where there are no keys.
var LocalScope = store.Scope{Org: "local", Project: "default"}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b[:])
}

// Ping checks the store.
func (s *Service) Ping(ctx context.Context) error {
	if s.store == nil {
		return nil
	}
	return s.store.Ping(ctx)
}
