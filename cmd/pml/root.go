package main

import (
	"log/slog"
	"os"
	"unicode"

	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
	var verbose bool
	root := &cobra.Command{
		Use:           "pml",
		Short:         "PML: an MCP gateway with code mode and hybrid local/cloud execution",
		SilenceUsage:  true,
		SilenceErrors: true,
		// With Args set, cobra hands an unknown command to RunE rather than
		// failing in its own terms (exit 1): `pml tracez` is a usage error.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return unknownCommand(cmd, args[0])
		},
	}
	root.SetFlagErrorFunc(flagError)
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
	// cobra's own help and completion commands, added now so that their
	// descriptions read like ours: lowercase, as `pml --help` lists them.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	lowercaseShorts(root)
	return root
}

// lowercaseShorts starts every command's one-line description below root
// with a lowercase letter, unless it starts with an acronym (PML, MCP).
func lowercaseShorts(root *cobra.Command) {
	for _, c := range root.Commands() {
		if r := []rune(c.Short); len(r) > 1 && unicode.IsUpper(r[0]) && !unicode.IsUpper(r[1]) {
			r[0] = unicode.ToLower(r[0])
			c.Short = string(r)
		}
		lowercaseShorts(c)
	}
}
