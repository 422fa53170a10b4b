package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/pml-go/pml/internal/httpserve"
	"github.com/pml-go/pml/internal/mcpdirect"
	"github.com/pml-go/pml/internal/procscale"
	"github.com/pml-go/pml/internal/rawio"
	"github.com/pml-go/pml/internal/stdioconn"
	"github.com/pml-go/pml/internal/stdioorder"
	"github.com/pml-go/pml/internal/wire"
	"github.com/pml-go/pml/internal/workspace"
)

// openPackage opens the package for the current directory's workspace.
func openPackage(ctx context.Context, log *slog.Logger) (*workspace.Workspace, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	pkg, err := workspace.Open(ctx, cwd, log)
	if err != nil {
		return nil, err
	}
	go func() {
		if err := pkg.ReportTools(ctx); err != nil {
			log.Debug("reporting local tools to the gateway", "err", err)
		}
	}()
	return pkg, nil
}

func newStdioCmd(logger func() *slog.Logger) *cobra.Command {
	var expose []string
	cmd := &cobra.Command{
		Use:   "stdio",
		Short: "serve MCP to an AI client over stdin/stdout",
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := logger()
			pkg, err := openPackage(cmd.Context(), log)
			if err != nil {
				return err
			}
			defer pkg.Close()
			if err := pkg.Expose(expose...); err != nil {
				return err
			}
			// Run returns when stdin closes; the deferred Close then stops every
			// local server so nothing outlives us. stdout keeps a progress
			// notification apart from the answer after it (see stdioorder);
			// stdioconn is the SDK's stdio transport, decoding each message once;
			// mcpdirect serves plain tool calls without the SDK's server around
			// them (docs/architecture.md "pml stdio"). Both pipes wait in
			// the poller, read and written with raw system calls (see rawio).
			in, out := rawio.Raw(rawio.Pollable(os.Stdin)), rawio.Raw(rawio.Pollable(os.Stdout))
			conn := stdioconn.NewServer(in, stdioorder.New(out, 0), 0)
			// GOMAXPROCS follows the requests in flight (see procscale).
			srv := pkg.NewMCPServer()
			srv.AddReceivingMiddleware(procscale.New().Middleware)
			err = mcpdirect.ServeStdio(cmd.Context(), srv, conn)
			if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
				log.Debug("stdio session ended", "err", err)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&expose, "expose", nil, "offer capability ns:action as a tool of its own, named ns.action (repeatable; adds to .pml.json \"expose\")")
	return cmd
}

func newServeCmd(logger func() *slog.Logger) *cobra.Command {
	var port int
	var noAuth bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "serve MCP to an AI client over Streamable HTTP at http://127.0.0.1:PORT/mcp",
		Long: "MCP server for an AI client over Streamable HTTP at http://127.0.0.1:PORT/mcp.\n" +
			"Every request must carry Authorization: Bearer <token>, the token in the workspace's .pml/serve-token\n" +
			"(created on first use, mode 0600; `pml init --http` writes it into .mcp.json). Requests from a browser\n" +
			"page (an Origin other than this server's own) are refused.\n" +
			"It also serves the trace viewer at http://127.0.0.1:PORT/ (its address, token included, is printed at start).",
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := logger()
			pkg, err := openPackage(cmd.Context(), log)
			if err != nil {
				return err
			}
			defer pkg.Close()
			var o workspace.ServeOptions
			if noAuth {
				log.Warn("pml serve --no-auth: any process on this machine can run tools as you")
			} else if o.Token, err = workspace.ServeToken(pkg.Workspace()); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err != nil {
				return fmt.Errorf("listen: %w", err)
			}
			log.Info("listening", "addr", "http://"+ln.Addr().String())
			// As Jupyter does: the one address to open, token included.
			fmt.Fprintf(cmd.ErrOrStderr(), "Trace viewer: %s\n", workspace.ViewerURL(ln.Addr().String(), o.Token))
			return pkg.HTTPServer(o, httpserve.Limits{}).Serve(cmd.Context(), ln)
		},
	}
	cmd.Flags().IntVar(&port, "port", 3003, "port on 127.0.0.1")
	cmd.Flags().BoolVar(&noAuth, "no-auth", false, "accept requests without the workspace token (any local process can then run tools)")
	return cmd
}

func newExecCmd(logger func() *slog.Logger) *cobra.Command {
	var file, argsJSON string
	var approve, compact bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "exec [CODE]",
		Short: "run one snippet exactly as an AI client's execute would; prints the answer JSON",
		Long: "Run one snippet exactly as an AI client's execute would; prints the answer JSON.\n" +
			"Exit status: 0 success, 1 error answer, 2 approval_required, 3 aborted or CANCELLED (Ctrl-C), 4 usage error (nothing ran).",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError(fmt.Errorf("one CODE argument at most, got %d (quote the snippet)", len(args)))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if timeout < 0 {
				return usageError(fmt.Errorf("--timeout must be positive, got %s", timeout))
			}
			code, err := snippet(args, file, cmd.InOrStdin())
			if err != nil {
				return err
			}
			codeArgs, err := execArgs(argsJSON)
			if err != nil {
				return err
			}
			log := logger()
			pkg, err := openPackage(cmd.Context(), log)
			if err != nil {
				return err
			}
			defer pkg.Close()
			req := wire.ExecuteRequest{Code: code, Args: codeArgs}
			if timeout > 0 {
				req.Options = &wire.ExecuteOptions{TimeoutMS: int(timeout.Milliseconds())}
			}
			var ans wire.Answer
			if approve {
				ans = pkg.ExecuteApproving(cmd.Context(), req, func(approved []string) {
					for _, line := range approved {
						fmt.Fprintf(cmd.ErrOrStderr(), "pml: %s\n", line)
					}
				})
			} else {
				ans = pkg.Execute(cmd.Context(), req)
			}
			ans = pkg.CommandLineAnswer(ans, workspace.CommandLine{Timeout: timeout})
			if ans.Status == wire.StatusApprovalRequired {
				fmt.Fprintf(cmd.ErrOrStderr(), "pml: approval required (%s):\n%s\n", ans.ApprovalType, ans.Description)
			}
			indent := "  "
			if compact {
				indent = ""
			}
			out, err := wire.MarshalIndent(ans, "", indent)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), string(out))
			return answerStatus(ans)
		},
	}
	cmd.Flags().StringVar(&file, "file", "", "read the snippet from a file (- for stdin)")
	cmd.Flags().StringVar(&argsJSON, "args", "", `the code's global args, a JSON object, e.g. '{"n":1}'`)
	cmd.Flags().BoolVar(&approve, "approve", false, "approve everything the plan needs, for this run only (stderr says what was approved)")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "wall-clock limit of the run, e.g. 30s (at most the configured one, 5m by default)")
	cmd.Flags().BoolVar(&compact, "json", false, "print the answer as one compact line (default: indented)")
	return cmd
}

// execArgs is the --args value checked as a JSON object; empty is none.
func execArgs(text string) (json.RawMessage, error) {
	if text == "" {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, usageError(fmt.Errorf(`--args is not JSON (%v); give an object, e.g. '{"n":1}'`, err))
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, usageError(errors.New(`--args must be a JSON object, e.g. '{"n":1}'`))
	}
	return json.RawMessage(text), nil
}

func snippet(args []string, file string, stdin io.Reader) (string, error) {
	switch {
	case len(args) == 1 && file != "":
		return "", usageError(errors.New("give the code as an argument or with --file, not both"))
	case len(args) == 1:
		return args[0], nil
	case file == "-":
		b, err := io.ReadAll(stdin)
		return string(b), err
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			// Nothing ran: a usage error, as a bad flag is (README "Commands").
			return "", usageError(fmt.Errorf("--file: %w", err))
		}
		return string(b), nil
	}
	return "", usageError(errors.New("no code: pml exec 'return 1' or pml exec --file snippet.ts"))
}

func newInitCmd() *cobra.Command {
	var o workspace.InitOptions
	cmd := &cobra.Command{
		Use:   "init",
		Short: "set up PML in this workspace (.pml.json, .mcp.json, .gitignore)",
		Long: "Set up PML in this workspace: .pml.json, .mcp.json, .gitignore.\n" +
			"By default .mcp.json makes the AI client start `pml stdio`. With --http it points the client at\n" +
			"`pml serve --port PORT` and carries the workspace token (.pml/serve-token) as Authorization: Bearer;\n" +
			".mcp.json is then written with mode 0600 and added to .gitignore.\n" +
			"Servers of an existing .mcp.json that PML can run move into .pml.json and are allowed; on a terminal\n" +
			"init asks first (-y takes the defaults without asking). The rest stay in .mcp.json.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := workspace.CheckCloudURL(o.CloudURL); err != nil {
				return usageError(err)
			}
			cwd, err := os.Getwd()
			if err != nil {
				return err
			}
			exe, err := os.Executable()
			if err != nil {
				exe = "pml"
			}
			var warning string
			if o.NPMPackage, warning = workspace.NPMLaunch(os.Getenv(workspace.NPMPackageEnv), exe); warning != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "pml init: warning:", warning)
			}
			if o.NPMPackage == "" {
				if o.Binary, err = workspace.InitBinary(exe, exec.LookPath); err != nil {
					return err
				}
			}
			o.Workspace, o.Out, o.In = workspace.FindWorkspace(cwd), cmd.OutOrStdout(), cmd.InOrStdin()
			o.Interactive = term.IsTerminal(int(os.Stdin.Fd()))
			o.LookPath = exec.LookPath
			return workspace.Init(o)
		},
	}
	cmd.Flags().StringVar(&o.CloudURL, "cloud-url", "", "gateway URL (default: local mode, no server)")
	cmd.Flags().StringVar(&o.APIKey, "api-key", "", "gateway API key (stored in the workspace .env)")
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "accept the defaults without asking (move and allow every server PML can run)")
	cmd.Flags().BoolVar(&o.Force, "force", false, "overwrite an existing .pml.json")
	cmd.Flags().BoolVar(&o.HTTP, "http", false, "point the AI client at `pml serve` (with the workspace token) instead of `pml stdio`")
	cmd.Flags().IntVar(&o.Port, "port", 3003, "with --http: the port `pml serve --port` listens on")
	return cmd
}
