package workspace

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/atomicfile"
)

// InitOptions are `pml init`'s flags.
type InitOptions struct {
	Workspace string
	CloudURL  string
	APIKey    string
	Force     bool
	// Binary is the pml executable the AI client should start (see
	// InitBinary).
	Binary string
	// NPMPackage, when npx ran pml from its cache through the npm launcher
	// (NPMLaunch), is that package: .mcp.json then starts
	// `npx -y NPMPackage stdio`, since the binary npx ran does not last.
	NPMPackage string
	// HTTP makes .mcp.json point the AI client at `pml serve --port Port`
	// with the workspace's serve token, instead of starting `pml stdio`.
	HTTP bool
	Port int
	Out  io.Writer // what init did, for the user
	// In answers init's questions (which servers to move into .pml.json,
	// whether to allow them) when Interactive and not Yes; otherwise init
	// takes the defaults: move every server PML can run, and allow them.
	In          io.Reader
	Interactive bool
	Yes         bool
	// LookPath finds a migrated stdio server's command (exec.LookPath); one
	// it cannot find is warned about, not refused. nil: no check.
	LookPath func(string) (string, error)
}

// CheckCloudURL refuses a gateway URL (--cloud-url) that is not http:// or
// https:// with a host, saying the fix: written without a scheme it would be
// accepted here and break every run afterwards (INVALID_CONFIG at exec).
// Empty is local mode.
func CheckCloudURL(raw string) error {
	if raw == "" {
		return nil
	}
	if !strings.Contains(raw, "://") {
		return fmt.Errorf("--cloud-url %s has no scheme: use http://%s (or https:// behind TLS)", raw, raw)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("--cloud-url %s is not a URL: %w", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("--cloud-url %s: the gateway is reached over http:// or https://, not %s://", raw, u.Scheme)
	case u.Host == "":
		return fmt.Errorf("--cloud-url %s has no host: e.g. http://127.0.0.1:8080", raw)
	}
	return nil
}

// Init sets up a workspace: .pml.json, .mcp.json (so the AI client starts
// `pml stdio`), .gitignore entries, and the migration into .pml.json of the
// servers an existing .mcp.json lists that PML can run (with a backup of the
// original). Servers PML cannot run, and keys of .mcp.json other than the
// servers, stay in .mcp.json for the AI client.
func Init(o InitOptions) error {
	if err := CheckCloudURL(o.CloudURL); err != nil {
		return err
	}
	ws := o.Workspace
	pmlPath := filepath.Join(ws, ConfigFile)
	_, statErr := os.Stat(pmlPath)
	if statErr == nil && !o.Force {
		return fmt.Errorf("%s already exists; use --force to overwrite it", pmlPath)
	}
	cfg := Config{
		Version:     "1",
		Workspace:   ws,
		Cloud:       CloudConfig{URL: o.CloudURL},
		Permissions: approval.DefaultPermissions(),
		Env:         map[string]string{},
		MCPServers:  map[string]ServerConfig{},
	}
	if statErr == nil {
		if err := keepUserSettings(o, pmlPath, &cfg); err != nil {
			return err
		}
	}
	mcpPath := filepath.Join(ws, ".mcp.json")
	existing, err := readMCPJSON(mcpPath)
	if err != nil {
		return err
	}
	servers, err := existing.servers(mcpPath)
	if err != nil {
		return err
	}
	p := &prompter{out: o.Out}
	switch {
	case o.Yes:
	case o.Interactive && o.In != nil:
		p.in = bufio.NewReader(o.In)
	default:
		fmt.Fprintln(o.Out, "stdin is not a terminal: taking the defaults (as with -y)")
	}
	plan, err := planMigration(p, servers, cfg.Permissions)
	if err != nil {
		return err
	}
	if len(plan.moved) > 0 {
		backup, err := backupFile(mcpPath)
		if err != nil {
			return fmt.Errorf("backing up %s: %w", mcpPath, err)
		}
		fmt.Fprintf(o.Out, "backed up %s to %s\n", mcpPath, backup)
	}
	for _, name := range plan.moved {
		cfg.MCPServers[name] = plan.configs[name]
	}
	cfg.Permissions.Allow = append(cfg.Permissions.Allow, plan.allowed...)
	if err := writeJSON(pmlPath, cfg); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "wrote %s\n", pmlPath)

	if err := writePMLEntry(o, mcpPath, existing, plan.kept); err != nil {
		return err
	}
	plan.report(o.Out, o.LookPath)
	if o.APIKey != "" {
		if err := appendDotEnv(filepath.Join(ws, ".env"), "PML_API_KEY", o.APIKey); err != nil {
			return err
		}
		fmt.Fprintf(o.Out, "stored PML_API_KEY in .env\n")
	}
	ignore := []string{ConfigFile, StateDir + "/", ".env"}
	if o.HTTP {
		ignore = append(ignore, ".mcp.json", ".mcp.json.bak*") // they hold the serve token
	}
	if err := ensureGitignore(filepath.Join(ws, ".gitignore"), ignore...); err != nil {
		return err
	}
	perm := cfg.Permissions
	fmt.Fprintf(o.Out, "permissions: allow %v; ask %v; deny %v (edit %s to change)\n", perm.Allow, perm.Ask, perm.Deny, ConfigFile)
	if o.CloudURL == "" {
		fmt.Fprintln(o.Out, "mode: local (gateway in-process, no server needed); set cloud.url to use a remote gateway")
	}
	return nil
}

// keepUserSettings carries over, on --force, what the user added to the
// existing .pml.json: the servers (an earlier init moved them there from
// .mcp.json, which no longer lists them), the env, the permissions and the
// shell settings. init decides only the version, workspace and cloud URL. A
// file that does not load is backed up before it is replaced.
func keepUserSettings(o InitOptions, pmlPath string, cfg *Config) error {
	old, err := LoadConfig(pmlPath)
	if err != nil {
		backup, berr := backupFile(pmlPath)
		if berr != nil {
			return fmt.Errorf("backing up %s: %w", pmlPath, berr)
		}
		fmt.Fprintf(o.Out, "%v\nbacked it up to %s and wrote a fresh one\n", err, backup)
		return nil
	}
	maps.Copy(cfg.MCPServers, old.MCPServers)
	maps.Copy(cfg.Env, old.Env)
	cfg.Permissions, cfg.Shell = old.Permissions, old.Shell
	return nil
}

// writePMLEntry writes .mcp.json with the one server the AI client needs —
// `pml stdio`, or with HTTP, the `pml serve` endpoint and its bearer token —
// next to the servers kept for the client and every other key of existing.
// The token makes the file a secret: it is then written with mode 0600.
func writePMLEntry(o InitOptions, mcpPath string, existing mcpJSON, kept map[string]json.RawMessage) error {
	servers := maps.Clone(kept)
	if servers == nil {
		servers = map[string]json.RawMessage{}
	}
	mode := os.FileMode(0o644)
	var what string
	if !o.HTTP {
		command, args := o.Binary, []string{"stdio"}
		if o.NPMPackage != "" {
			command, args = "npx", []string{"-y", o.NPMPackage, "stdio"}
		}
		servers["pml"], _ = json.Marshal(map[string]any{"command": command, "args": args, "env": map[string]string{"PML_WORKSPACE": o.Workspace}})
		what = fmt.Sprintf("the AI client starts `%s %s`", command, strings.Join(args, " "))
	} else {
		if o.Port <= 0 || o.Port > 65535 {
			return fmt.Errorf("--port %d: want a TCP port (1-65535)", o.Port)
		}
		token, err := ServeToken(o.Workspace)
		if err != nil {
			return err
		}
		servers["pml"], _ = json.Marshal(map[string]any{"type": "http", "url": fmt.Sprintf("http://127.0.0.1:%d/mcp", o.Port),
			"headers": map[string]string{"Authorization": "Bearer " + token}})
		mode = 0o600
		bin := o.Binary
		if o.NPMPackage != "" {
			bin = "npx -y " + o.NPMPackage
		}
		what = fmt.Sprintf("the AI client connects to `%s serve --port %d` with the token in %s; keep the file private",
			bin, o.Port, filepath.Join(StateDir, ServeTokenFile))
	}
	top := maps.Clone(existing)
	if top == nil {
		top = mcpJSON{}
	}
	top["mcpServers"], _ = json.Marshal(servers)
	data, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteMode(mcpPath, append(data, '\n'), atomicfile.Fast, mode); err != nil {
		return fmt.Errorf("writing %s: %w", mcpPath, err)
	}
	fmt.Fprintf(o.Out, "wrote %s (%s)\n", mcpPath, what)
	return nil
}

// mcpJSON is Claude Code's `.mcp.json`, every top-level key kept as
// written: init rewrites only "mcpServers".
type mcpJSON map[string]json.RawMessage

// servers returns the "mcpServers" object of m.
func (m mcpJSON) servers(path string) (map[string]json.RawMessage, error) {
	var s map[string]json.RawMessage
	raw, ok := m["mcpServers"]
	if !ok {
		return s, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s: mcpServers: %w", path, err)
	}
	return s, nil
}

func readMCPJSON(path string) (mcpJSON, error) {
	var m mcpJSON
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("%s: %s", path, describeJSONError(data, err))
	}
	return m, nil
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(path, append(data, '\n')); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// backupFile copies path to the first free name of path.bak, path.bak.1, …
// so an earlier backup (the user's original file) is never overwritten. The
// copy keeps the original's mode: a .mcp.json holding the serve token stays
// private.
func backupFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	for i := 0; ; i++ {
		backup := path + ".bak"
		if i > 0 {
			backup += "." + strconv.Itoa(i)
		}
		f, err := os.OpenFile(backup, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		return backup, errors.Join(err, f.Close())
	}
}

func appendDotEnv(path, key, value string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "%s=%s\n", key, value)
	return err
}

// ensureGitignore appends the entries the file lacks.
func ensureGitignore(path string, entries ...string) error {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	lines := strings.Split(string(data), "\n")
	var add []string
	for _, e := range entries {
		if !slices.Contains(lines, e) && !slices.Contains(lines, strings.TrimSuffix(e, "/")) {
			add = append(add, e)
		}
	}
	if len(add) == 0 {
		return nil
	}
	prefix := ""
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		prefix = "\n"
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(prefix + "# PML\n" + strings.Join(add, "\n") + "\n")
	return err
}
