package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/pml-go/pml/internal/admission"
	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/traceapi"
	"github.com/pml-go/pml/internal/httpserve"
	"github.com/pml-go/pml/internal/learning"
	"github.com/pml-go/pml/internal/procscale"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/storeopen"
)

// defaultMetricsAddr is where /metrics is served unless --metrics-addr says
// otherwise: loopback, since the series count every tenant's executions.
const defaultMetricsAddr = "127.0.0.1:9464"

func newGatewayCmd(logger func() *slog.Logger) *cobra.Command {
	var addr, db, configPath, metricsAddr, tlsCert, tlsKey string
	var limits sandbox.Limits
	var drain drainTimes
	var adm admissionFlags
	retention := traceapi.DefaultRetention()
	ingest := traceapi.DefaultIngestLimits()
	var ingestMiB int64 = ingest.BytesPerMinute >> 20
	var maxUnauth, bodyBufferMiB, globalK int
	var publicHosts []string
	cmd := &cobra.Command{
		Use:   "gateway",
		Short: "run the PML gateway (MCP Streamable HTTP at /mcp)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if maxUnauth < 1 || bodyBufferMiB < 1 {
				return errors.New("--max-unauthenticated-conns and --body-buffer-mib must be positive")
			}
			for _, h := range publicHosts {
				if err := gateway.CheckPublicHost(h); err != nil {
					return fmt.Errorf("--public-host: %w", err)
				}
			}
			cert, useTLS, err := loadTLS(tlsCert, tlsKey)
			if err != nil {
				return err
			}
			log := logger()
			// Libraries that write with the standard log package (OpenTelemetry's
			// export errors among them) write through the same handler: one format.
			slog.SetDefault(log)
			var cfg gateway.FileConfig
			if configPath != "" {
				if cfg, err = gateway.LoadConfig(configPath); err != nil {
					return err
				}
			}
			if cmd.Flags().Changed("global-k") {
				if cfg.Global == nil {
					cfg.Global = &gateway.GlobalLayer{}
				}
				cfg.Global.K = &globalK
			}
			lims := adm.limits()
			if err := lims.Validate(); err != nil {
				return err
			}
			ctrl := admission.New(lims, limits)
			log.Info("admission", "limits", ctrl.Limits().String())
			// GOMAXPROCS follows the requests in flight and the background
			// work (learning, trace retention), as pml stdio's follows its requests (see procscale;
			// docs/performance.md "The hybrid path").
			procs := procscale.New()
			svc, closer, err := gateway.Open(cmd.Context(), gateway.Options{DB: db, Config: cfg, Logger: log, Limits: limits, Admission: ctrl, Retention: &retention, Busy: procs.Begin,
				TraceIngest: &traceapi.IngestLimits{TracesPerMinute: ingest.TracesPerMinute, BytesPerMinute: ingestMiB << 20}})
			if err != nil {
				return err
			}
			defer closer.Close()
			lim := httpserve.Limits{MaxUnauthConns: maxUnauth, MaxBufferedBytes: int64(bodyBufferMiB) << 20, PublicHosts: publicHosts}
			srv := svc.HTTPServer(lim)
			srv.Wrap(procs.Handler)
			if useTLS {
				srv.UseTLS(cert)
			}
			metrics := metricsListener{addr: metricsAddr, explicit: cmd.Flags().Changed("metrics-addr")}
			return serveGateway(cmd.Context(), log, addr, metrics, drain, srv, svc)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "listen address HOST:PORT")
	cmd.Flags().DurationVar(&drain.delay, "shutdown-delay", 0,
		"on SIGTERM, how long to go on serving while /readyz says not ready, so load balancers take the replica out (behind one: a few of its health-check intervals)")
	cmd.Flags().DurationVar(&drain.grace, "shutdown-grace", 25*time.Second,
		"then how long running executions get to finish (new ones get 503) before they are cancelled")
	cmd.Flags().StringVar(&metricsAddr, "metrics-addr", defaultMetricsAddr,
		`listen address of GET /metrics (every tenant's counts, no key: keep it private), or "off"`)
	cmd.Flags().StringVar(&tlsCert, "tls-cert", "", "PEM certificate (chain) file: serve HTTPS; needs --tls-key")
	cmd.Flags().StringVar(&tlsKey, "tls-key", "", "PEM private key file of --tls-cert")
	cmd.Flags().StringArrayVar(&publicHosts, "public-host", nil,
		"host name a reverse proxy on this machine forwards to the gateway (repeatable); other names on loopback get 403")
	cmd.Flags().StringVar(&db, "db", "pml-gateway.db", "SQLite file path or postgres:// URL")
	cmd.Flags().StringVar(&configPath, "config", "", "gateway config JSON (servers, routing)")
	cmd.Flags().DurationVar(&limits.Timeout, "timeout", sandbox.DefaultLimits().Timeout, "wall clock of an execution, waiting on tools included; requests may ask less (at most 5m)")
	cmd.Flags().DurationVar(&limits.CPUBudget, "cpu-budget", sandbox.DefaultLimits().CPUBudget, "CPU time an execution may spend running JS (wall time outside Linux); requests may ask less")
	cmd.Flags().DurationVar(&limits.RPCTimeout, "rpc-timeout", sandbox.DefaultLimits().RPCTimeout, "how long one mcp.* call of an execution may take (the execution's wall clock bounds it too)")
	adm.register(cmd)
	cmd.Flags().DurationVar(&retention.MaxAge, "trace-retention-age", retention.MaxAge, "delete traces older than this (0: keep them)")
	cmd.Flags().IntVar(&retention.MaxCount, "trace-retention-count", retention.MaxCount, "keep at most this many traces per tenant, the newest (0: no limit)")
	cmd.Flags().IntVar(&ingest.TracesPerMinute, "trace-ingest-per-minute", ingest.TracesPerMinute, "traces a tenant may post per minute; past it, 429 with Retry-After (0: no limit)")
	cmd.Flags().Int64Var(&ingestMiB, "trace-ingest-mib-per-minute", ingestMiB, "MiB of traces a tenant may post per minute; past it, 429 with Retry-After (0: no limit)")
	cmd.Flags().IntVar(&globalK, "global-k", learning.DefaultGlobalK,
		`distinct orgs that must share a tool graph edge or a tool's result types before every tenant sees it (0: no global layer); overrides the config's "global": {"k"}`)
	cmd.Flags().IntVar(&maxUnauth, "max-unauthenticated-conns", httpserve.DefaultMaxUnauthConns,
		"connections without a valid key held at once; past it the oldest is closed")
	cmd.Flags().IntVar(&bodyBufferMiB, "body-buffer-mib", httpserve.DefaultMaxBufferedBytes>>20,
		"MiB of request bodies held in memory at once; past it requests wait, then get 503")
	cmd.AddCommand(newKeyCmd(), newApprovalsCmd())
	return cmd
}

// loadTLS reads the gateway's certificate and key: both files or neither.
// A bad file stops the gateway at start rather than at the first handshake.
func loadTLS(certFile, keyFile string) (tls.Certificate, bool, error) {
	switch {
	case certFile == "" && keyFile == "":
		return tls.Certificate{}, false, nil
	case certFile == "" || keyFile == "":
		return tls.Certificate{}, false, errors.New("--tls-cert and --tls-key go together: give both or neither")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, false, fmt.Errorf("--tls-cert %s / --tls-key %s: %w", certFile, keyFile, err)
	}
	return cert, true, nil
}

// tenantStore is the --db, --org and --project of the gateway's commands
// that act on one tenant's rows of the store.
type tenantStore struct{ db, org, project string }

// flags adds the three flags to c.
func (ts *tenantStore) flags(c *cobra.Command) {
	c.Flags().StringVar(&ts.db, "db", "pml-gateway.db", "SQLite file path or postgres:// URL")
	c.Flags().StringVar(&ts.org, "org", "", "organisation (required)")
	c.Flags().StringVar(&ts.project, "project", "", "project (required)")
	_ = c.MarkFlagRequired("org")
	_ = c.MarkFlagRequired("project")
}

// run opens the store and calls f with it and the tenant.
func (ts *tenantStore) run(cmd *cobra.Command, f func(store.Store, store.Scope) error) error {
	st, err := storeopen.Open(cmd.Context(), ts.db)
	if err != nil {
		return err
	}
	defer st.Close()
	return f(st, store.Scope{Org: ts.org, Project: ts.project})
}

func newKeyCmd() *cobra.Command {
	key := &cobra.Command{Use: "key", Short: "manage API keys"}
	var ts tenantStore
	create := &cobra.Command{
		Use:   "create",
		Short: "create an API key for an org and project; prints it once",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return ts.run(cmd, func(st store.Store, scope store.Scope) error {
				k, err := gateway.CreateKey(cmd.Context(), st, scope)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), k)
				return nil
			})
		},
	}
	ts.flags(create)
	key.AddCommand(create)
	return key
}

// newApprovalsCmd lists and revokes what projects approved of other orgs'
// skills through clients without a package (docs/security.md "Tenants and
// names").
func newApprovalsCmd() *cobra.Command {
	approvals := &cobra.Command{Use: "approvals", Short: "list or revoke a project's kept approvals of other orgs' skills"}
	var ts tenantStore
	list := &cobra.Command{
		Use:   "list",
		Short: "list the versions a project approved, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return ts.run(cmd, func(st store.Store, scope store.Scope) error {
				out, err := gateway.SkillApprovals(cmd.Context(), st, scope)
				if err != nil {
					return err
				}
				for _, a := range out {
					fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\t%s\n", a.FQDN, a.CreatedAt.UTC().Format(time.RFC3339), a.ApprovedBy)
				}
				return nil
			})
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke FQDN",
		Short: "revoke a project's approval of one version: its next run asks again",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return ts.run(cmd, func(st store.Store, scope store.Scope) error {
				return gateway.RevokeSkillApproval(cmd.Context(), st, scope, args[0])
			})
		},
	}
	for _, c := range []*cobra.Command{list, revoke} {
		ts.flags(c)
		approvals.AddCommand(c)
	}
	return approvals
}

// metricsListener is where /metrics is served: an address, or "off".
// explicit: given with --metrics-addr rather than the default.
type metricsListener struct {
	addr     string
	explicit bool
}

// drainTimes are the two waits of a replica's way out on SIGTERM
// (docs/operations.md "Rolling updates").
type drainTimes struct{ delay, grace time.Duration }

// serveGateway serves the gateway on addr and its metrics on metrics.addr
// ("off": none) until ctx ends; either failing to listen stops both, but for
// a default metrics address that is taken (a second gateway on the host, or
// another Prometheus exporter): the gateway then serves without metrics.
// When ctx ends (SIGTERM), the replica drains: not ready for drain.delay,
// then no new MCP request is admitted while running ones get drain.grace,
// then what is left is cancelled and the servers close.
func serveGateway(ctx context.Context, log *slog.Logger, addr string, metrics metricsListener, drain drainTimes, srv *httpserve.Server, svc *gateway.Service) error {
	serving, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServing()
	g, gctx := errgroup.WithContext(serving)
	if metrics.addr != "off" {
		if host, _, err := net.SplitHostPort(metrics.addr); err == nil && !isLoopback(host) {
			log.Warn("metrics listener is not on loopback: it shows every tenant's counts to anyone who reaches it", "addr", metrics.addr)
		}
		mlog := log.With("server", "metrics")
		ln, err := net.Listen("tcp", metrics.addr)
		switch {
		case err != nil && !metrics.explicit && errors.Is(err, syscall.EADDRINUSE):
			log.Warn("the default metrics address is in use: serving without /metrics; give --metrics-addr HOST:PORT (or off)", "addr", metrics.addr)
		case err != nil:
			return fmt.Errorf("listen %s: %w", metrics.addr, err)
		default:
			msrv := httpserve.New(svc.MetricsHandler(), httpserve.Limits{MaxUnauthConns: -1}, mlog)
			g.Go(func() error { return serve(gctx, mlog, ln, msrv) })
		}
	}
	g.Go(func() error { return listenAndServe(gctx, log, addr, srv) })
	g.Go(func() error {
		select {
		case <-gctx.Done(): // a listener failed
			return nil
		case <-ctx.Done():
		}
		log.Info("shutting down: not ready", "shutdown_delay", drain.delay)
		svc.BeginDrain()
		select {
		case <-gctx.Done():
			return nil
		case <-time.After(drain.delay):
		}
		svc.StopAdmitting()
		log.Info("shutting down: admitting nothing new, waiting for running executions", "shutdown_grace", drain.grace, "in_flight", svc.InFlight())
		wait, cancel := context.WithTimeout(gctx, drain.grace)
		left := svc.WaitIdle(wait)
		cancel()
		if left > 0 {
			// Cancel the runs, not their requests: each is answered
			// CANCELLED with its trace, whatever its client's MCP version.
			// Requests still open after that are ended.
			log.Warn("shutting down: cancelling executions still running after the grace", "executions", left)
			svc.CancelRuns()
			answer, cancel := context.WithTimeout(gctx, cancelledAnswerWait)
			left = svc.WaitIdle(answer)
			cancel()
			if left > 0 {
				log.Warn("shutting down: ending requests still open after their runs were cancelled", "requests", left)
				srv.CancelRequests()
			}
		}
		stopServing()
		return nil
	})
	return g.Wait()
}

// cancelledAnswerWait is how long a draining gateway waits, after
// cancelling the runs still going at the end of its grace, for their
// CANCELLED answers to be written: a cancelled run stops within 100 ms
// (docs/limits.md "A run's end is final").
const cancelledAnswerWait = 2 * time.Second

func isLoopback(host string) bool { return gateway.IsLoopbackHost(host) }

// listenAndServe serves srv on addr until ctx ends (then it drains).
func listenAndServe(ctx context.Context, log *slog.Logger, addr string, srv *httpserve.Server) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	return serve(ctx, log, ln, srv)
}

func serve(ctx context.Context, log *slog.Logger, ln net.Listener, srv *httpserve.Server) error {
	log.Info("listening", "addr", srv.Scheme()+"://"+ln.Addr().String())
	return srv.Serve(ctx, ln)
}
