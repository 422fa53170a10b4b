// Package traceapi is the gateway's trace API: ingest of the traces packages
// record (validation, normalization, sanitizing again, idempotence), the
// queries over a tenant's traces (the list and the child tree, bounded), their
// HTTP handlers, the store of the gateway's own runs' traces and the
// retention policy. It takes what it needs from the gateway explicitly, so it
// never imports it.
package traceapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// Observer receives what the trace API counts; the gateway's Prometheus
// series implement it.
type Observer interface {
	// LocalRun counts a package's top-level local run in the execution
	// metrics, as the gateway counts its own runs when they finish.
	LocalRun(status wire.Status, code pmlerr.Code, d time.Duration)
	// TraceQueue is a package's sync backlog after its last batch.
	TraceQueue(depth int)
	// TracesDropped adds traces lost: dropped by a package's full queue, or
	// not stored by this gateway.
	TracesDropped(n int64)
	// TracesPruned adds traces deleted by the retention policy.
	TracesPruned(n int)
}

// Config is what an API is built from.
type Config struct {
	// Store holds the traces; nil stores none (ingest refuses, lists are
	// empty, every trace is not found).
	Store store.Store
	// Sanitizer cleans every trace before it is stored; nil: one without
	// .env values (the gateway holds none).
	Sanitizer *tracing.Sanitizer
	// Export sends a stored trace to OpenTelemetry, linked to the request's
	// traceparent; nil exports nothing.
	Export func(ctx context.Context, t tracing.Trace)
	// Observer counts; required.
	Observer Observer
	// Learn is handed every trace once stored, with its tenant (the
	// gateway's learning, docs/architecture.md); nil hands none.
	Learn  func(scope store.Scope, t tracing.Trace)
	Logger *slog.Logger
	// Scope is the tenant of an authenticated request; the handlers run
	// only behind the gateway's key check.
	Scope func(*http.Request) store.Scope
	// Caller names a request's principal (docs/auth.md), recorded in the
	// traces it posts; nil records none.
	Caller func(*http.Request) string
	// Owner names, in messages, whose traces a request reads: "this API
	// key's project", "this workspace" (local mode); nil: "this project".
	Owner func(*http.Request) string
	// Retention is the retention policy; nil keeps traces forever and Run
	// returns at once.
	Retention *Retention
	// Now is the gateway's clock, which posted times are checked against;
	// nil: time.Now.
	Now func() time.Time
	// Ingest bounds what each tenant may post per minute through
	// ServePost; zero: no bound.
	Ingest IngestLimits
	// Busy, when set, is told when a retention pass starts and returns the
	// function told when it ends: pml gateway, whose GOMAXPROCS follows the
	// work in flight (procscale), counts a pass as one request
	// (docs/performance.md "The hybrid path").
	Busy func() (end func())
}

// API serves a gateway's traces. Safe for concurrent use.
type API struct {
	store     store.Store
	sanitizer *tracing.Sanitizer
	export    func(context.Context, tracing.Trace)
	obs       Observer
	log       *slog.Logger
	scope     func(*http.Request) store.Scope
	caller    func(*http.Request) string
	owner     func(*http.Request) string
	retention *retention // nil: no retention
	commits   *groupCommit
	learn     func(store.Scope, tracing.Trace)
	now       func() time.Time
	ingest    *ingestLimiter // nil: no bound
}

// New builds an API; zero fields of cfg get working defaults, but for
// Observer and Scope.
func New(cfg Config) *API {
	a := &API{store: cfg.Store, sanitizer: cfg.Sanitizer, export: cfg.Export, obs: cfg.Observer, log: cfg.Logger, scope: cfg.Scope, caller: cfg.Caller, owner: cfg.Owner, now: cfg.Now, learn: cfg.Learn}
	if a.now == nil {
		a.now = time.Now
	}
	if a.learn == nil {
		a.learn = func(store.Scope, tracing.Trace) {}
	}
	a.ingest = newIngestLimiter(cfg.Ingest, a.now)
	if a.caller == nil {
		a.caller = func(*http.Request) string { return "" }
	}
	if a.owner == nil {
		a.owner = func(*http.Request) string { return "this project" }
	}
	if a.sanitizer == nil {
		a.sanitizer = tracing.NewSanitizer(nil)
	}
	if a.export == nil {
		a.export = func(context.Context, tracing.Trace) {}
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.store != nil {
		// A run's own trace is new: which ones were is not asked.
		a.commits = &groupCommit{put: func(ctx context.Context, rows []store.Trace) error {
			_, err := a.store.PutTraces(ctx, rows)
			return err
		}}
	}
	if cfg.Retention != nil {
		a.retention = newRetention(*cfg.Retention, a.store, a.log, a.obs, cfg.Busy)
		a.retention.now = a.now
	}
	return a
}

// Sanitizer is the sanitizer every stored trace went through.
func (a *API) Sanitizer() *tracing.Sanitizer { return a.sanitizer }

// Keep exports and stores a trace of one of the gateway's own runs, already
// sanitized with Sanitizer, under scope; it returns the trace id. A store
// failure is logged and counted as a dropped trace, never the run's failure.
func (a *API) Keep(ctx context.Context, scope store.Scope, t tracing.Trace) string {
	a.export(ctx, t)
	if a.store == nil {
		return t.TraceID
	}
	// The trace is encoded and committed on a goroutine of its own, which
	// ends with it. Both run deep (encoding/json's encoders, SQLite), and a
	// run's request goroutine calls Keep 11 KiB down its stack already:
	// there they grew that stack to 32 or 64 KiB, which it kept into its
	// connection's next request. A request parked in a run uses 13 KiB of
	// it, and the collector halves a stack only while under a quarter of it
	// is in use: in the 10,000 wave 4,096 of those stacks stayed 32 KiB
	// rather than 16 (docs/performance.md "Near the floor (issue 42)").
	done := make(chan keepOutcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- keepOutcome{panicked: p}
			}
		}()
		a.storeTrace(ctx, scope, t)
		done <- keepOutcome{}
	}()
	if out := <-done; out.panicked != nil {
		panic(out.panicked)
	}
	return t.TraceID
}

// keepOutcome is how Keep's goroutine ends: a panic goes on in Keep's caller.
type keepOutcome struct{ panicked any }

// storeTrace stores t, or counts and logs it as dropped.
func (a *API) storeTrace(ctx context.Context, scope store.Scope, t tracing.Trace) {
	row, err := t.StoreRecord(scope)
	if err == nil {
		err = a.commits.store(ctx, row)
	}
	if err != nil {
		a.obs.TracesDropped(1)
		a.log.Warn("storing trace", "trace_id", t.TraceID, "err", err)
		return
	}
	a.retention.noteWrites(scope, 1)
	a.learn(scope, t)
}
