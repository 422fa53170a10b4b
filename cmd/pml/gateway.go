package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/spf13/cobra"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/storeopen"
)

func newGatewayCmd(logger func() *slog.Logger) *cobra.Command {
	var addr, db, configPath string
	var maxUnauth, bodyBufferMiB int
	cmd := &cobra.Command{
		Use:   "gateway",
		Short: "Run the PML gateway (MCP Streamable HTTP at /mcp)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if maxUnauth < 1 || bodyBufferMiB < 1 {
				return errors.New("--max-unauthenticated-conns and --body-buffer-mib must be positive")
			}
			log := logger()
			var cfg gateway.FileConfig
			if configPath != "" {
				var err error
				if cfg, err = gateway.LoadConfig(configPath); err != nil {
					return err
				}
			}
			svc, closer, err := gateway.Open(cmd.Context(), gateway.Options{DB: db, Config: cfg, Logger: log})
			if err != nil {
				return err
			}
			defer closer.Close()
			lim := gateway.HTTPLimits{MaxUnauthConns: maxUnauth, MaxBufferedBytes: int64(bodyBufferMiB) << 20}
			return listenAndServe(cmd.Context(), log, addr, svc.HTTPServer(lim))
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "listen address HOST:PORT")
	cmd.Flags().StringVar(&db, "db", "pml-gateway.db", "SQLite file path or postgres:// URL")
	cmd.Flags().StringVar(&configPath, "config", "", "gateway config JSON (servers, routing)")
	cmd.Flags().IntVar(&maxUnauth, "max-unauthenticated-conns", gateway.DefaultMaxUnauthConns,
		"connections without a valid key held at once; past it the oldest is closed")
	cmd.Flags().IntVar(&bodyBufferMiB, "body-buffer-mib", gateway.DefaultMaxBufferedBytes>>20,
		"MiB of request bodies held in memory at once; past it requests wait, then get 503")
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

// listenAndServe serves srv on addr until ctx ends (then it drains).
func listenAndServe(ctx context.Context, log *slog.Logger, addr string, srv *gateway.HTTPServer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	log.Info("listening", "addr", "http://"+ln.Addr().String())
	return srv.Serve(ctx, ln)
}
