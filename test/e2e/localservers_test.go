//go:build linux

package e2e

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// Local MCP servers configured in .pml.json, spawned by `pml stdio` itself.

// A server starts on first use, not before, and one process serves every
// later call, concurrent ones included.
func TestStdioLocalServerLazyStartAndReuse(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	ws := testfixture.Workspace(t, map[string]any{"fx": map[string]any{"command": testfixture.BuildServer(t)}})
	p := startStdio(t, ws, gatewayEnv(g))

	// A built-in call does not start the configured server.
	wantLocal(t, p.execute(t, `return await mcp.filesystem.list_directory({path: "."})`), nil)
	time.Sleep(100 * time.Millisecond) // let a wrongly eager start show up
	if kids := childPIDs(t, p.cmd.Process.Pid); len(kids) != 0 {
		t.Fatalf("local server started before its first use: children %v", kids)
	}

	var first []int
	wantLocal(t, p.execute(t, `return await Promise.all([1, 2, 3, 4].map(() => mcp.fx.pid({})))`), &first)
	var second int
	wantLocal(t, p.execute(t, `return await mcp.fx.pid({})`), &second)
	if pids := slices.Compact(slices.Sorted(slices.Values(first))); len(pids) != 1 || pids[0] != second {
		t.Fatalf("want one server process for every call, got pids %v then %d", first, second)
	}
	if kids := childPIDs(t, p.cmd.Process.Pid); !slices.Equal(kids, []int{second}) {
		t.Fatalf("children %v, want exactly the server %d", kids, second)
	}

	// The AI client's discover lists the server's tools, and the gateway
	// learns them as client tools.
	p.discover(t, discoverAll())
	direct := g.Connect(t, g.Key, false)
	res, err := direct.CallTool(context.Background(), &mcp.CallToolParams{Name: "discover", Arguments: wire.DiscoverRequest{Name: "fx:pid"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"routing":"client"`) {
		t.Fatalf("the gateway does not know fx:pid as a client tool: %v %+v", err, res)
	}
}

// ${VAR} in a server's command, args and env comes from the environment and
// the workspace .env; tools are addressed serverName:toolName.
func TestStdioLocalServerEnvSubstitution(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	ws := testfixture.Workspace(t, map[string]any{"fx": map[string]any{
		"command": "${FX_BIN}",
		"env":     map[string]string{"TOKEN": "${FX_TOKEN}", "FROM_PROCESS": "pre-${FROM_ENV}-post"},
	}})
	testfixture.WriteFile(t, ws, ".env", "FX_TOKEN=s3cr3t-from-dotenv\nFX_BIN="+testfixture.BuildServer(t)+"\n")
	p := startStdio(t, ws, append(gatewayEnv(g), "FROM_ENV=env-value"))

	var got []string
	wantLocal(t, p.execute(t, `const tok = await mcp.fx.env({name: "TOKEN"});
		return [tok, String(tok.length), await mcp.fx.env({name: "FROM_PROCESS"}), await mcp.fx.cwd({})]`), &got)
	// The token reached the server (its length says so) and comes back
	// masked, as every .env value the AI client could see.
	if !slices.Equal(got, []string{"[REDACTED]", "18", "pre-env-value-post", ws}) {
		t.Fatalf("got %q", got)
	}
}

// A configured server named filesystem replaces the built-in namespace
// whole: its tools answer, the built-in's are gone.
func TestStdioConfiguredFilesystemReplacesBuiltin(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	ws := testfixture.Workspace(t, map[string]any{"filesystem": map[string]any{"command": testfixture.BuildServer(t)}})
	testfixture.WriteFile(t, ws, "a.txt", "built-in would read this")
	p := startStdio(t, ws, gatewayEnv(g))

	var pid string
	wantLocal(t, p.execute(t, `return String(await mcp.filesystem.pid({}))`), &pid)
	if _, err := strconv.Atoi(pid); err != nil {
		t.Fatalf("filesystem:pid answered %q", pid)
	}
	wantError(t, p.execute(t, `return await mcp.filesystem.read_file({path: "a.txt"})`), "UNKNOWN_TOOL", "filesystem:read_file")
	wantLocal(t, p.execute(t, `return await mcp.shell.exec({command: "echo still-built-in"})`), nil)
}

// A real npm reference server as a local tool: @modelcontextprotocol/
// server-filesystem, configured as filesystem, in place of the built-in.
func TestStdioNpmReferenceServer(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	ws := t.TempDir()
	testfixture.WriteConfig(t, ws, map[string]any{"filesystem": npmFilesystemServer(t, ws)})
	testfixture.WriteFile(t, ws, "docs/readme.md", "# hello from npm")
	p := startStdio(t, ws, gatewayEnv(g))

	a := p.execute(t, `const text = await mcp.filesystem.read_text_file({path: "`+ws+`/docs/readme.md"});
		const dirs = await mcp.filesystem.list_allowed_directories({});
		const parsed = await mcp.json.parse({data: JSON.stringify({text: text.content})});
		return {text: parsed.text, dirs};`)
	var res struct {
		Text string `json:"text"`
		Dirs any    `json:"dirs"`
	}
	wantLocal(t, a, &res)
	if !strings.Contains(res.Text, "# hello from npm") {
		t.Fatalf("result %s", a.Result)
	}
	if got := callsTo(g); !slices.Equal(got, []string{"json:parse"}) {
		t.Fatalf("gateway calls %v", got)
	}
	// Its tools are listed for the AI client under the server's name.
	found := false
	for _, d := range p.discover(t, discoverAll()).Tools {
		found = found || (d.ID == "filesystem:read_text_file" && d.Routing == "client")
	}
	if !found {
		t.Fatal("discover does not list filesystem:read_text_file as a client tool")
	}
}
