// Package workspace is PML on the user's machine, for one workspace (what
// the docs call "the package"): the MCP server an AI client talks to (stdio
// or Streamable HTTP). It forwards execute to the gateway and, when the
// gateway answers execute_locally, runs the code in its own sandbox, routing
// each mcp.* call to a local tool (built-in or a local MCP server it manages)
// or back to the gateway.
package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/jsonkeys"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/upstream"
)

// ConfigFile is the workspace's PML configuration, `.pml.json`.
const ConfigFile = ".pml.json"

// StateDir is the per-workspace state directory (lockfile, deps, caches, traces).
const StateDir = ".pml"

// Config is `.pml.json`.
type Config struct {
	Version     string                  `json:"version"`
	Workspace   string                  `json:"workspace,omitempty"`
	Cloud       CloudConfig             `json:"cloud"`
	Permissions approval.Permissions    `json:"permissions"`
	Env         map[string]string       `json:"env,omitempty"`
	Shell       ShellConfig             `json:"shell,omitzero"`
	MCPServers  map[string]ServerConfig `json:"mcpServers,omitempty"`
	// Expose names capabilities ("ns:action") the AI client sees as tools
	// of their own (docs/configuration.md).
	Expose []string `json:"expose,omitempty"`
	// Approvals is how approvals reach the person: "elicitation",
	// "elicitation_preferred" (the default, "") or "agent" (docs/security.md "Trust: approvals and secrets").
	Approvals string `json:"approvals,omitempty"`
}

// ShellConfig tunes the built-in shell:exec.
type ShellConfig struct {
	// Env names the variables a command gets beyond the minimal base
	// (PATH, HOME, locale, terminal; see docs/configuration.md), their values taken
	// from the environment, else the workspace .env.
	Env []string `json:"env,omitempty"`
}

// CloudConfig says where the gateway is; an empty URL means local mode.
type CloudConfig struct {
	URL string `json:"url,omitempty"`
}

// ServerConfig is one local MCP server, in the `.mcp.json` style.
type ServerConfig struct {
	Type    string            `json:"type,omitempty"` // stdio (default) | http | sse
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Auth "oauth" attaches the token `pml connect URL` stored for the url
	// (an http server only).
	Auth string `json:"auth,omitempty"`
}

// LoadConfig reads path. A missing file is a zero-config start with the
// permissions `pml init` would write; a malformed one, or one with a key
// .pml.json has not, is an INVALID_CONFIG naming the file and the problem.
func LoadConfig(path string) (Config, error) {
	var c Config
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Config{Permissions: approval.DefaultPermissions()}, nil
	}
	if err != nil {
		return c, configError(path, err.Error())
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, configError(path, describeJSONError(data, err))
	}
	// A misspelt key would otherwise be dropped without a word, and a typo
	// in "permissions" would make every tool ask.
	if err := jsonkeys.Check(data, &c); err != nil {
		return c, configError(path, err.Error())
	}
	if err := c.Permissions.Validate(); err != nil {
		return c, configError(path, "permissions: "+err.Error())
	}
	for _, name := range c.Shell.Env {
		if !envName.MatchString(name) {
			return c, configError(path, fmt.Sprintf("shell.env: %q is not a variable name", name))
		}
	}
	if c.Approvals != "" && !slices.Contains(approvalFlows, c.Approvals) {
		return c, configError(path, fmt.Sprintf("approvals: %q is not one of %s", c.Approvals, strings.Join(approvalFlows, ", ")))
	}
	for _, id := range c.Expose {
		if !exposeID.MatchString(id) {
			return c, configError(path, fmt.Sprintf("expose: %q is not a capability name (ns:action)", id))
		}
	}
	for name, s := range c.MCPServers {
		if err := s.validate(name); err != nil {
			return c, configError(path, err.Error())
		}
	}
	return c, nil
}

// exposeID is a capability name whose tool name (see exposedToolName) the
// MCP tool-name rules accept.
var exposeID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,63}:[A-Za-z0-9_-]{1,63}$`)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func configError(path, msg string) error {
	return pmlerr.New(pmlerr.InvalidConfig, "%s: %s", path, msg).With("file", path)
}

// describeJSONError adds the line and column to a JSON syntax or type error.
func describeJSONError(data []byte, err error) string {
	var offset int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		offset = se.Offset
	case errors.As(err, &te):
		offset = te.Offset
	}
	if offset < 0 {
		return err.Error()
	}
	line, col := 1, 1
	for _, b := range data[:min(int(offset), len(data))] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("line %d, column %d: %v", line, col, err)
}

func (s ServerConfig) kind() string {
	switch {
	case s.Type != "":
		return s.Type
	case s.URL != "":
		return "http"
	}
	return "stdio"
}

func (s ServerConfig) validate(name string) error {
	switch {
	case name == "" || strings.ContainsAny(name, ": .\t"):
		return fmt.Errorf("mcpServers: bad server name %q", name)
	case s.kind() == "stdio" && s.Command == "":
		return fmt.Errorf("mcpServers.%s: a stdio server needs a command", name)
	case !slices.Contains(upstream.Types, s.kind()):
		return fmt.Errorf("mcpServers.%s: type must be one of %s, not %q", name, strings.Join(upstream.Types, ", "), s.Type)
	case s.kind() != "stdio" && s.URL == "":
		return fmt.Errorf("mcpServers.%s: an %s server needs a url", name, s.kind())
	case s.Auth != "" && s.Auth != AuthOAuth:
		return fmt.Errorf("mcpServers.%s: auth must be %q, not %q", name, AuthOAuth, s.Auth)
	case s.Auth != "" && s.kind() != "http":
		return fmt.Errorf("mcpServers.%s: auth %q needs an http server, not %s", name, s.Auth, s.kind())
	}
	return nil
}

// upstreamConfig resolves ${VAR} references against env and returns the
// pool configuration plus the names that are set nowhere.
func (s ServerConfig) upstreamConfig(name, workspace string, env *approval.Env) (upstream.ServerConfig, []string) {
	var missing []string
	expand := func(v string) string {
		out, miss := env.Expand(v)
		missing = append(missing, miss...)
		return out
	}
	cfg := upstream.ServerConfig{Name: name, Type: s.kind(), Command: expand(s.Command), URL: expand(s.URL), Dir: workspace}
	for _, a := range s.Args {
		cfg.Args = append(cfg.Args, expand(a))
	}
	cfg.Env = expandMap(s.Env, expand)
	cfg.Headers = expandMap(s.Headers, expand)
	cfg.StoredOAuth = s.Auth == AuthOAuth
	sort.Strings(missing)
	return cfg, compactStrings(missing)
}

func expandMap(m map[string]string, expand func(string) string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = expand(v)
	}
	return out
}

func compactStrings(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// FindWorkspace returns PML_WORKSPACE, else the nearest directory above dir
// holding a project marker, else dir.
func FindWorkspace(dir string) string {
	if ws := os.Getenv("PML_WORKSPACE"); ws != "" {
		if abs, err := filepath.Abs(ws); err == nil {
			return abs
		}
		return ws
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	for d := abs; ; d = filepath.Dir(d) {
		for _, marker := range []string{ConfigFile, ".git", "go.mod", "package.json", "deno.json", "pyproject.toml", "Cargo.toml"} {
			if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
				return d
			}
		}
		if filepath.Dir(d) == d {
			return abs
		}
	}
}
