package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/pml-go/pml/internal/oauthclient"
	"github.com/pml-go/pml/internal/workspace"
)

// clientSecretEnv carries a pre-registered client's secret: a secret on the
// command line would show in the process list and shell history.
const clientSecretEnv = "PML_OAUTH_CLIENT_SECRET"

func newConnectCmd() *cobra.Command {
	var (
		o        oauthclient.ConnectOptions
		name     string
		callArgs string
	)
	cmd := &cobra.Command{
		Use:   "connect URL",
		Short: "authorize pml with an MCP server that needs OAuth, store its token, list its tools",
		Long: "Connect to an MCP server over Streamable HTTP. When it asks for OAuth, run the authorization-code\n" +
			"flow with PKCE (a browser and a loopback redirect; --headless follows the authorization server's\n" +
			"redirects itself) and store the tokens under the user config directory (pml/oauth, mode 0600),\n" +
			"refreshed as they expire. --name NS also adds the server to this workspace's .pml.json with\n" +
			"\"auth\": \"oauth\", so runs call it as mcp.NS.* with the stored token. A client registered beforehand:\n" +
			"--client-id, its secret in " + clientSecretEnv + ".",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(errors.New("connect takes one URL: pml connect URL"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			u, err := url.Parse(args[0])
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return usageError(fmt.Errorf("connect: %q is not an http(s) URL", args[0]))
			}
			if callArgs != "" {
				if err := json.Unmarshal([]byte(callArgs), &o.CallArgs); err != nil || o.CallArgs == nil {
					return usageError(errors.New("connect: --args must be a JSON object"))
				}
			}
			var ws string
			if name != "" {
				cwd, err := os.Getwd()
				if err != nil {
					return err
				}
				ws = workspace.FindWorkspace(cwd)
				if err := workspace.CheckOAuthServer(ws, name, args[0]); err != nil {
					return err
				}
			}
			if o.Store, err = oauthclient.DefaultStore(); err != nil {
				return err
			}
			o.URL, o.Out, o.OpenBrowser = args[0], cmd.ErrOrStderr(), openBrowser
			o.ClientSecret = os.Getenv(clientSecretEnv)
			res, err := oauthclient.Connect(cmd.Context(), o)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "%d tool(s) on %s:\n", len(res.Tools), o.URL)
			for _, t := range res.Tools {
				fmt.Fprintf(out, "  %s\t%s\n", t.Name, t.Description)
			}
			if res.CallResult != nil {
				b, _ := json.Marshal(res.CallResult)
				fmt.Fprintf(out, "%s: %s\n", o.Call, b)
			}
			if name != "" {
				path, err := workspace.AddOAuthServer(ws, name, o.URL)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "added %s to %s (\"auth\": \"oauth\")\n", name, path)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.Headless, "headless", false, "print the authorization URL and follow its redirects without a browser")
	cmd.Flags().StringVar(&name, "name", "", "also add the server to this workspace's .pml.json under this namespace")
	cmd.Flags().StringVar(&o.ClientID, "client-id", "", "a client registered beforehand (secret in "+clientSecretEnv+")")
	cmd.Flags().StringVar(&o.ClientMetadataURL, "client-metadata-url", "", "an https URL of a client ID metadata document, used where the server supports it")
	cmd.Flags().StringVar(&o.Call, "call", "", "after listing, call this tool once and print its result")
	cmd.Flags().StringVar(&callArgs, "args", "", "with --call: the tool's arguments, a JSON object")
	return cmd
}

// openBrowser opens url with the desktop's opener, if there is one.
func openBrowser(ctx context.Context, url string) error {
	opener := "xdg-open"
	switch runtime.GOOS {
	case "darwin":
		opener = "open"
	case "windows":
		return exec.CommandContext(ctx, "rundll32", "url.dll,FileProtocolHandler", url).Start()
	}
	path, err := exec.LookPath(opener)
	if err != nil {
		return err
	}
	if runtime.GOOS == "linux" && os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return errors.New("no display")
	}
	c := exec.Command(path, url) // not tied to ctx: the browser outlives pml
	if err := c.Start(); err != nil {
		return err
	}
	go func() { _ = c.Wait() }()
	return nil
}
