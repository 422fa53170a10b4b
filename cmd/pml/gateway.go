package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/pml-go/pml/internal/admission"
	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/storeopen"
)

// defaultMetricsAddr is where /metrics is served unless --metrics-addr says
// otherwise: loopback, since the series count every tenant's executions.
const defaultMetricsAddr = "127.0.0.1:9464"

func newGatewayCmd(logger func() *slog.Logger) *cobra.Command {
	var addr, db, configPath, metricsAddr string
	var limits sandbox.Limits
	var adm admissionFlags
	retention := gateway.DefaultTraceRetention()
	cmd := &cobra.Command{
		Use:   "gateway",
		Short: "Run the PML gateway (MCP Streamable HTTP at /mcp)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := logger()
			var cfg gateway.FileConfig
			if configPath != "" {
				var err error
				if cfg, err = gateway.LoadConfig(configPath); err != nil {
					return err
				}
			}
			lims := adm.limits()
			if err := lims.Validate(); err != nil {
				return err
			}
			ctrl := admission.New(lims, limits)
			log.Info("admission", "limits", ctrl.Limits().String())
			svc, closer, err := gateway.Open(cmd.Context(), gateway.Options{DB: db, Config: cfg, Logger: log, Limits: limits, Admission: ctrl, Retention: &retention})
			if err != nil {
				return err
			}
			defer closer.Close()
			return serveGateway(cmd.Context(), log, addr, metricsAddr, svc)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "listen address HOST:PORT")
	cmd.Flags().StringVar(&metricsAddr, "metrics-addr", defaultMetricsAddr,
		`listen address of GET /metrics (every tenant's counts, no key: keep it private), or "off"`)
	cmd.Flags().StringVar(&db, "db", "pml-gateway.db", "SQLite file path or postgres:// URL")
	cmd.Flags().StringVar(&configPath, "config", "", "gateway config JSON (servers, routing)")
	cmd.Flags().DurationVar(&limits.Timeout, "timeout", sandbox.DefaultLimits().Timeout, "wall clock of an execution, waiting on tools included; requests may ask less (at most 5m)")
	cmd.Flags().DurationVar(&limits.CPUBudget, "cpu-budget", sandbox.DefaultLimits().CPUBudget, "time an execution may spend running JS; requests may ask less")
	adm.register(cmd)
	cmd.Flags().DurationVar(&retention.MaxAge, "trace-retention-age", retention.MaxAge, "delete traces older than this (0: keep them)")
	cmd.Flags().IntVar(&retention.MaxCount, "trace-retention-count", retention.MaxCount, "keep at most this many traces per tenant, the newest (0: no limit)")
	cmd.AddCommand(newKeyCmd())
	return cmd
}

func newKeyCmd() *cobra.Command {
	key := &cobra.Command{Use: "key", Short: "Manage API keys"}
	var db, org, project string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create an API key for an org and project; prints it once",
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := storeopen.Open(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer st.Close()
			k, err := gateway.CreateKey(cmd.Context(), st, store.Scope{Org: org, Project: project})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), k)
			return nil
		},
	}
	create.Flags().StringVar(&db, "db", "pml-gateway.db", "SQLite file path or postgres:// URL")
	create.Flags().StringVar(&org, "org", "", "organisation (required)")
	create.Flags().StringVar(&project, "project", "", "project (required)")
	_ = create.MarkFlagRequired("org")
	_ = create.MarkFlagRequired("project")
	key.AddCommand(create)
	return key
}

// serveGateway serves the gateway on addr and its metrics on metricsAddr
// ("off": none) until ctx ends; either failing to listen stops both.
func serveGateway(ctx context.Context, log *slog.Logger, addr, metricsAddr string, svc *gateway.Service) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return serveHTTP(ctx, log, addr, svc.Handler()) })
	if metricsAddr != "off" {
		if host, _, err := net.SplitHostPort(metricsAddr); err == nil && !isLoopback(host) {
			log.Warn("metrics listener is not on loopback: it shows every tenant's counts to anyone who reaches it", "addr", metricsAddr)
		}
		g.Go(func() error { return serveHTTP(ctx, log.With("server", "metrics"), metricsAddr, svc.MetricsHandler()) })
	}
	return g.Wait()
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveHTTP serves h on addr until ctx ends. Then requests get 2 s to
// finish; after that their contexts are cancelled, which also ends
// long-lived event streams that would otherwise hold the shutdown open.
func serveHTTP(ctx context.Context, log *slog.Logger, addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	base, cancelRequests := context.WithCancel(context.Background())
	defer cancelRequests()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return base }}
	log.Info("listening", "addr", "http://"+ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	drained := make(chan struct{})
	defer close(drained)
	go func() {
		select {
		case <-time.After(2 * time.Second):
			cancelRequests()
		case <-drained:
		}
	}()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("closing connections still open after the drain", "err", err)
		_ = srv.Close()
	}
	return nil
}
