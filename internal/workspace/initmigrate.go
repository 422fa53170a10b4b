package workspace

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/jsonkeys"
)

// migration is what init does with the servers of an existing .mcp.json.
type migration struct {
	moved   []string                   // into .pml.json, sorted
	configs map[string]ServerConfig    // of the moved servers
	allowed []string                   // moved servers added to permissions.allow
	kept    map[string]json.RawMessage // left in .mcp.json, as written
	reasons map[string]string          // why each kept server was kept
}

// planMigration decides, asking through p, which servers move. A server
// moves only if .pml.json can hold it exactly (no key PML would drop) and
// PML can run it: anything else stays in .mcp.json for the AI client, so
// init never writes a config PML then refuses. The "pml" entry is init's
// own and is replaced.
func planMigration(p *prompter, servers map[string]json.RawMessage, perms approval.Permissions) (migration, error) {
	m := migration{configs: map[string]ServerConfig{}, kept: map[string]json.RawMessage{}, reasons: map[string]string{}}
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		if name == "pml" {
			continue
		}
		raw := servers[name]
		sc, err := runnableServer(name, raw)
		if err != nil {
			m.kept[name], m.reasons[name] = raw, err.Error()
			continue
		}
		move, err := p.confirm(fmt.Sprintf("Move MCP server %q (%s) into %s, so PML runs it for the AI client?", name, sc.kind(), ConfigFile), true)
		if err != nil {
			return m, err
		}
		if !move {
			m.kept[name], m.reasons[name] = raw, "you chose to keep it"
			continue
		}
		m.moved = append(m.moved, name)
		m.configs[name] = sc
	}
	var ask []string
	for _, name := range m.moved {
		if perms.Decide(name+":*") != approval.Allow {
			ask = append(ask, name)
		}
	}
	if len(ask) == 0 {
		return m, nil
	}
	allow, err := p.confirm(fmt.Sprintf("Allow the tools of %s without asking each time (you ran them directly before)?", strings.Join(ask, ", ")), true)
	if err != nil {
		return m, err
	}
	if allow {
		m.allowed = ask
	}
	return m, nil
}

// runnableServer decodes one .mcp.json entry as .pml.json holds it, and
// refuses one it would hold only in part or could not run.
func runnableServer(name string, raw json.RawMessage) (ServerConfig, error) {
	var sc ServerConfig
	if err := json.Unmarshal(raw, &sc); err != nil {
		return sc, err
	}
	if err := jsonkeys.Check(raw, &sc); err != nil {
		return sc, err
	}
	return sc, sc.validate(name)
}

// report tells the user what moved, what was allowed and what stayed, and
// warns about a moved stdio server whose command lookPath does not find:
// it moved all the same (the user may install it next), but its tools
// fail until then.
func (m migration) report(out io.Writer, lookPath func(string) (string, error)) {
	if len(m.moved) > 0 {
		fmt.Fprintf(out, "moved servers into %s: %s\n", ConfigFile, strings.Join(m.moved, ", "))
	}
	for _, name := range m.moved {
		cmd := m.configs[name].Command
		if cmd == "" || strings.Contains(cmd, "${") || lookPath == nil {
			continue // not stdio, or known only when it starts
		}
		if _, err := lookPath(cmd); err != nil {
			fmt.Fprintf(out, "warning: %q runs %q, which is not found on PATH: install it, or fix its \"command\" in %s; until then its tools fail\n", name, cmd, ConfigFile)
		}
	}
	if len(m.allowed) > 0 {
		fmt.Fprintf(out, "allowed without asking: %s (remove them from permissions.allow in %s to be asked)\n", strings.Join(m.allowed, ", "), ConfigFile)
	}
	for _, name := range slices.Sorted(maps.Keys(m.kept)) {
		fmt.Fprintf(out, "left %q in .mcp.json for the AI client: %s\n", name, m.reasons[name])
	}
}
