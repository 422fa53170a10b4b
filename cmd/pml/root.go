package main

import (
	"log/slog"
	"os"

	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
	var verbose bool
	root := &cobra.Command{
		Use:           "pml",
		Short:         "PML: an MCP gateway with code mode and hybrid local/cloud execution",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	root.PersistentFlags().BoolVarP(&verbose, "verbose", "v", false, "debug logging (to stderr)")
	logger := func() *slog.Logger {
		level := slog.LevelInfo
		if verbose || os.Getenv("PML_DEBUG") != "" {
			level = slog.LevelDebug
		}
		// Logs always go to stderr: in stdio mode stdout carries JSON-RPC only.
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	}
	root.AddCommand(newGatewayCmd(logger), newStdioCmd(logger), newServeCmd(logger), newExecCmd(logger), newInitCmd(), newTracesCmd(), newConnectCmd(), newVersionCmd())
	return root
}
