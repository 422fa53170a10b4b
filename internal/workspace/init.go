package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
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
	// Binary is the pml executable the AI client should start.
	Binary string
	// HTTP makes .mcp.json point the AI client at `pml serve --port Port`
	// with the workspace's serve token, instead of starting `pml stdio`.
	HTTP bool
	Port int
	Out  io.Writer // what init did, for the user
}

// mcpJSON is Claude Code's `.mcp.json`.
type mcpJSON struct {
	MCPServers map[string]json.RawMessage `json:"mcpServers"`
}

// Init sets up a workspace: .pml.json, .mcp.json (so the AI client starts
// `pml stdio`), .gitignore entries, and the migration of the servers an
// existing .mcp.json lists into .pml.json (with a backup of the original).
func Init(o InitOptions) error {
	ws := o.Workspace
	pmlPath := filepath.Join(ws, ConfigFile)
	if _, err := os.Stat(pmlPath); err == nil && !o.Force {
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
	// --force resets what init decides but keeps what the user added: the
	// servers (an earlier init moved them here from .mcp.json, which no
	// longer lists them) and the env.
	if old, err := LoadConfig(pmlPath); err != nil {
		fmt.Fprintf(o.Out, "overwriting unreadable %s\n", pmlPath)
	} else {
		maps.Copy(cfg.MCPServers, old.MCPServers)
		maps.Copy(cfg.Env, old.Env)
	}
	mcpPath := filepath.Join(ws, ".mcp.json")
	existing, err := readMCPJSON(mcpPath)
	if err != nil {
		return err
	}
	var migrated []string
	for name, raw := range existing.MCPServers {
		if name == "pml" {
			continue
		}
		var sc ServerConfig
		if err := json.Unmarshal(raw, &sc); err != nil {
			return fmt.Errorf("%s: server %q: %w", mcpPath, name, err)
		}
		cfg.MCPServers[name] = sc
		migrated = append(migrated, name)
	}
	sort.Strings(migrated)
	if len(migrated) > 0 {
		backup, err := backupFile(mcpPath)
		if err != nil {
			return fmt.Errorf("backing up %s: %w", mcpPath, err)
		}
		fmt.Fprintf(o.Out, "backed up %s to %s\n", mcpPath, backup)
	}
	if err := writeJSON(pmlPath, cfg); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "wrote %s\n", pmlPath)

	if err := writePMLEntry(o, mcpPath); err != nil {
		return err
	}
	if len(migrated) > 0 {
		fmt.Fprintf(o.Out, "moved servers into %s: %s\n", ConfigFile, strings.Join(migrated, ", "))
	}
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
	p := cfg.Permissions
	fmt.Fprintf(o.Out, "permissions: allow %v; ask %v; deny %v (edit %s to change)\n", p.Allow, p.Ask, p.Deny, ConfigFile)
	if o.CloudURL == "" {
		fmt.Fprintln(o.Out, "mode: local (gateway in-process, no server needed); set cloud.url to use a remote gateway")
	}
	return nil
}

// writePMLEntry writes .mcp.json with the one server the AI client needs:
// `pml stdio`, or with HTTP, the `pml serve` endpoint and its bearer token.
// The token makes the file a secret: it is written with mode 0600.
func writePMLEntry(o InitOptions, mcpPath string) error {
	if !o.HTTP {
		raw, _ := json.Marshal(map[string]any{"command": o.Binary, "args": []string{"stdio"}, "env": map[string]string{"PML_WORKSPACE": o.Workspace}})
		if err := writeJSON(mcpPath, mcpJSON{MCPServers: map[string]json.RawMessage{"pml": raw}}); err != nil {
			return err
		}
		fmt.Fprintf(o.Out, "wrote %s (the AI client starts `%s stdio`)\n", mcpPath, o.Binary)
		return nil
	}
	if o.Port <= 0 || o.Port > 65535 {
		return fmt.Errorf("--port %d: want a TCP port (1-65535)", o.Port)
	}
	token, err := ServeToken(o.Workspace)
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(map[string]any{"type": "http", "url": fmt.Sprintf("http://127.0.0.1:%d/mcp", o.Port),
		"headers": map[string]string{"Authorization": "Bearer " + token}})
	data, _ := json.MarshalIndent(mcpJSON{MCPServers: map[string]json.RawMessage{"pml": raw}}, "", "  ")
	if err := atomicfile.WriteMode(mcpPath, append(data, '\n'), atomicfile.Fast, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", mcpPath, err)
	}
	fmt.Fprintf(o.Out, "wrote %s (the AI client connects to `%s serve --port %d` with the token in %s; keep the file private)\n",
		mcpPath, o.Binary, o.Port, filepath.Join(StateDir, ServeTokenFile))
	return nil
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
