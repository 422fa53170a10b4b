package workspace_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/workspace"
)

const twoServers = `{"mcpServers": {"a": {"command": "a-server"}, "b": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}`

// On a terminal init asks, one line per question: here it moves a, keeps b
// for the AI client and does not allow a. Answers that are neither yes nor
// no are asked again, then refused before anything is written, and the
// next init works.
func TestInitPrompts(t *testing.T) {
	ws := t.TempDir()
	testfixture.WriteFile(t, ws, ".mcp.json", twoServers)
	var out bytes.Buffer
	o := workspace.InitOptions{Workspace: ws, Binary: "pml", Out: &out, Interactive: true}

	o.In = strings.NewReader("maybe\nperhaps\nwhat\n")
	if err := workspace.Init(o); err == nil || !strings.Contains(err.Error(), "no yes/no answer") {
		t.Fatalf("unanswerable prompt: %v", err)
	}
	if got, _ := filepath.Glob(filepath.Join(ws, ".pml.json*")); len(got) != 0 {
		t.Fatalf("a refused init wrote %v", got)
	}

	out.Reset()
	o.In = strings.NewReader("y\nno\nn\n")
	if err := workspace.Init(o); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`Move MCP server "a" (stdio)`, `Move MCP server "b" (http)`, "Allow the tools of a without asking", `left "b" in .mcp.json for the AI client: you chose to keep it`} {
		if !strings.Contains(out.String(), q) {
			t.Errorf("output lacks %q:\n%s", q, out.String())
		}
	}
	cfg, err := workspace.LoadConfig(filepath.Join(ws, workspace.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.MCPServers) != 1 || cfg.MCPServers["a"].Command != "a-server" || slices.Contains(cfg.Permissions.Allow, "a") {
		t.Fatalf("config %+v", cfg)
	}

	// Input that ends early takes the defaults for the rest: b moves and
	// is allowed; a, already in .pml.json, stays as it was.
	out.Reset()
	o.Force, o.In = true, strings.NewReader("")
	if err := workspace.Init(o); err != nil {
		t.Fatal(err)
	}
	cfg, err = workspace.LoadConfig(filepath.Join(ws, workspace.ConfigFile))
	if err != nil || len(cfg.MCPServers) != 2 || !slices.Contains(cfg.Permissions.Allow, "b") || slices.Contains(cfg.Permissions.Allow, "a") {
		t.Fatalf("config %+v, %v\n%s", cfg, err, out.String())
	}
}

// With Yes, init asks nothing even on a terminal.
func TestInitYesAsksNothing(t *testing.T) {
	ws := t.TempDir()
	testfixture.WriteFile(t, ws, ".mcp.json", twoServers)
	var out bytes.Buffer
	err := workspace.Init(workspace.InitOptions{Workspace: ws, Binary: "pml", Out: &out, Interactive: true, Yes: true, In: strings.NewReader("n\nn\nn\n")})
	if err != nil || strings.Contains(out.String(), "[Y/n]") {
		t.Fatalf("%v\n%s", err, out.String())
	}
	cfg, err := workspace.LoadConfig(filepath.Join(ws, workspace.ConfigFile))
	if err != nil || len(cfg.MCPServers) != 2 || !slices.Contains(cfg.Permissions.Allow, "a") || !slices.Contains(cfg.Permissions.Allow, "b") {
		t.Fatalf("config %+v, %v", cfg, err)
	}
}

// A go run build is recognised by where go links it; any other path is
// written as is.
func TestInitBinary(t *testing.T) {
	none := func(string) (string, error) { return "", errNotFound }
	onPath := func(string) (string, error) { return "/usr/local/bin/pml", nil }
	tmp := "/tmp/go-build42/b001/exe/pml"
	if got, err := workspace.InitBinary("/home/u/go/bin/pml", none); err != nil || got != "/home/u/go/bin/pml" {
		t.Fatalf("installed binary: %q %v", got, err)
	}
	if got, err := workspace.InitBinary(tmp, onPath); err != nil || got != "/usr/local/bin/pml" {
		t.Fatalf("go run with pml on PATH: %q %v", got, err)
	}
	if _, err := workspace.InitBinary(tmp, none); err == nil || !strings.Contains(err.Error(), "go install ./cmd/pml") {
		t.Fatalf("go run without pml on PATH: %v", err)
	}
	if _, err := workspace.InitBinary(tmp, func(string) (string, error) { return "/tmp/go-build7/b001/exe/pml", nil }); err == nil {
		t.Fatal("another temporary build on PATH was accepted")
	}

	// Since Go 1.24 go run links into the build cache: $GOCACHE/HH/HASH-d/NAME.
	cached := "/root/.cache/go-build/23/238b2b1f0d7e5a0c9f1e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a19080-d/pml"
	if got, err := workspace.InitBinary(cached, onPath); err != nil || got != "/usr/local/bin/pml" {
		t.Fatalf("go run from the build cache with pml on PATH: %q %v", got, err)
	}
	if _, err := workspace.InitBinary(cached, none); err == nil || !strings.Contains(err.Error(), "go install ./cmd/pml") {
		t.Fatalf("go run from the build cache without pml on PATH: %v", err)
	}
	if _, err := workspace.InitBinary(cached, func(string) (string, error) { return cached, nil }); err == nil {
		t.Fatal("a build-cache binary on PATH was accepted")
	}
	// Directories that only look alike are installs, not go run builds.
	for _, exe := range []string{
		"/opt/23/238b2b1f-d/pml", // too short for an action hash
		"/opt/ab/238b2b1f0d7e5a0c9f1e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a19080-d/pml", // shard is not the hash's start
		"/opt/23/238b2b1f0d7e5a0c9f1e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a19080/pml",   // no -d
	} {
		if got, err := workspace.InitBinary(exe, none); err != nil || got != exe {
			t.Fatalf("%s: %q %v", exe, got, err)
		}
	}
}

var errNotFound = errors.New("not found")

// A migrated stdio server whose command is not on PATH is warned about, by
// name, and moved all the same; one that is found, or an http server, is
// not warned about (issue 30, item 1).
func TestInitWarnsWhenACommandIsMissing(t *testing.T) {
	ws := t.TempDir()
	testfixture.WriteFile(t, ws, ".mcp.json", `{"mcpServers": {"a": {"command": "a-server"}, "b": {"type": "http", "url": "http://127.0.0.1:9/mcp"}, "c": {"command": "c-server"}}}`)
	var out bytes.Buffer
	look := func(cmd string) (string, error) {
		if cmd == "c-server" {
			return "/usr/bin/c-server", nil
		}
		return "", errors.New("not found")
	}
	if err := workspace.Init(workspace.InitOptions{Workspace: ws, Binary: "pml", Out: &out, Yes: true, LookPath: look}); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, `warning: "a" runs "a-server", which is not found on PATH`) || strings.Count(s, "warning:") != 1 {
		t.Fatalf("%s", s)
	}
	cfg, err := workspace.LoadConfig(filepath.Join(ws, workspace.ConfigFile))
	if err != nil || len(cfg.MCPServers) != 3 {
		t.Fatalf("config %+v, %v", cfg, err)
	}
}

// Started through the npm launcher, init writes the npx form, which lasts
// where the binary npx ran does not (issue 30, item 10).
func TestInitWritesNPXFormForTheNPMLauncher(t *testing.T) {
	ws := t.TempDir()
	var out bytes.Buffer
	if err := workspace.Init(workspace.InitOptions{Workspace: ws, NPMPackage: "@pml-go/pml", Out: &out, Yes: true}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(ws, ".mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	data := string(raw)
	if !strings.Contains(data, `"command": "npx"`) || !strings.Contains(data, `"args": [
        "-y",
        "@pml-go/pml",
        "stdio"
      ]`) || !strings.Contains(out.String(), "`npx -y @pml-go/pml stdio`") {
		t.Fatalf("%s\n%s", data, out.String())
	}
}

// The launcher's package reaches .mcp.json only as an npm package name, and
// only when npx ran pml from its cache; an installed pml is named by its
// path, which needs no registry to start (issue 33, item 2).
func TestNPMLaunchPicksTheFormThatStarts(t *testing.T) {
	const cached = "/home/u/.npm/_npx/1f2e/node_modules/@pml-go/pml-linux-x64/bin/pml"
	const global = "/usr/local/lib/node_modules/@pml-go/pml-linux-x64/bin/pml"
	for _, c := range []struct {
		pkg, exe, want string
		warns          bool
	}{
		{"", cached, "", false},
		{"@pml-go/pml", cached, "@pml-go/pml", false},
		{"pml", cached, "pml", false},
		{"@pml-go/pml", global, "", false},
		{"@pml-go/pml", "/work/p/node_modules/@pml-go/pml-linux-x64/bin/pml", "", false},
		{"@pml-go/pml", "/srv/not_npx_dir/pml", "", false},
		{`--package=evil@1 -c "id"`, cached, "", true},
		{"@pml-go/pml stdio", cached, "", true},
		{"@Evil/Pkg", cached, "", true},
		{"../x", cached, "", true},
		{"-y", cached, "", true},
		{"@scope/", cached, "", true},
		{strings.Repeat("a", 215), cached, "", true},
	} {
		got, warning := workspace.NPMLaunch(c.pkg, c.exe)
		if got != c.want || (warning != "") != c.warns {
			t.Errorf("NPMLaunch(%q, %q) = %q, %q; want %q, warning %v", c.pkg, c.exe, got, warning, c.want, c.warns)
		}
		if c.warns && !strings.Contains(warning, "not an npm package name") {
			t.Errorf("warning %q", warning)
		}
	}
}
