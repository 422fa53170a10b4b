package approval

import (
	"fmt"
	"slices"
	"strings"
)

// ConfigState is what a description needs to know of the workspace's
// .pml.json: where it is and whether it exists yet.
type ConfigState struct {
	Path   string // the .pml.json of the workspace
	Exists bool
}

// NoConfigNote is the line an approval's description gets when the
// workspace has no .pml.json: the "allow list of .pml.json" the items
// speak of is not there yet, and answering always creates it.
func NoConfigNote(c ConfigState) string {
	return fmt.Sprintf("There is no %s yet: always creates it with the default permissions plus these tools (`pml init` sets one up).", c.Path)
}

// CommandLineDescription is the description of an approval_required for a
// person at the command line (`pml exec`), who answers by running the
// command again, not with continue_workflow: it lists the items, then says
// what to do there (README "Commands"): rerun with --approve, or add the
// tools to permissions.allow of .pml.json, naming them; without a
// .pml.json, `pml init` creates one.
func CommandLineDescription(items []Item, c ConfigState) string {
	lines := make([]string, 0, len(items)+1)
	for _, it := range items {
		d := it.Description
		if it.Type == TypeToolPermission && !it.Once && it.Tool != "" {
			d = fmt.Sprintf("The code calls %s, which is not in permissions.allow of .pml.json.", it.Tool)
			if !c.Exists {
				d = fmt.Sprintf("The code calls %s, which needs approval: there is no .pml.json, whose permissions.allow would list it.", it.Tool)
			}
		}
		lines = append(lines, d)
	}
	always := AlwaysAllow(items)
	keysOnly := !slices.ContainsFunc(items, func(it Item) bool { return it.Type != TypeAPIKey })
	var do string
	switch {
	case keysOnly:
		do = "Add the keys to the workspace's .env, then run the command again."
	case len(always) == 0:
		do = "Run the command again with --approve to approve this run."
	case c.Exists:
		do = fmt.Sprintf("Run the command again with --approve to approve this run only, or add %s to \"permissions\": {\"allow\": [...]} in %s so it no longer asks.",
			quoted(always), c.Path)
	default:
		do = fmt.Sprintf("Run the command again with --approve to approve this run only, or run `pml init` (it creates %s) and add %s to its \"permissions\": {\"allow\": [...]} so it no longer asks.",
			c.Path, quoted(always))
	}
	if len(lines) > 1 {
		return "- " + strings.Join(lines, "\n- ") + "\n" + do
	}
	return strings.Join(append(lines, do), "\n")
}

// quoted is `"a", "b"`: tool ids as they are written in .pml.json.
func quoted(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, ", ")
}

// CommandLineApproved says what `pml exec --approve` approves of items, a
// line for each kind, in the terms of a person at the command line rather
// than of continue_workflow. --approve continues with approved true and
// never always: tools are approved for this run only, so the line says
// where to allow them for good (README "Commands").
func CommandLineApproved(items []Item, c ConfigState) []string {
	var lines []string
	if ids := AlwaysAllow(items); len(ids) > 0 {
		them := plural(len(ids), "it", "them")
		hint := fmt.Sprintf("to stop asking, add %s to permissions.allow in %s", them, c.Path)
		if !c.Exists {
			hint = fmt.Sprintf("to stop asking, run `pml init` (it creates %s) and add %s to its permissions.allow", c.Path, them)
		}
		lines = append(lines, fmt.Sprintf("approved for this run: %s (%s)", strings.Join(ids, ", "), hint))
	}
	for _, it := range items {
		switch {
		case it.Type == TypeToolPermission && it.Once:
			lines = append(lines, fmt.Sprintf("approved for this one call: %s on %s", it.Tool, it.Path))
		case it.Type == TypeDependency && it.Dependency != nil:
			d := it.Dependency
			lines = append(lines, fmt.Sprintf("approved installing the MCP server %s (runs `%s`) for %s",
				d.Name, strings.TrimSpace(d.Command+" "+strings.Join(d.Args, " ")), it.Tool))
		case it.Type == TypeIntegrity && it.Integrity != nil:
			lines = append(lines, fmt.Sprintf("approved the changed registry entry %s (new hash %s; the lockfile records it)",
				it.Integrity.FQDN, it.Integrity.NewHash))
		case it.Type == TypeAPIKey:
			lines = append(lines, fmt.Sprintf("continuing with %s for %s, now in the workspace's .env", strings.Join(it.Keys, ", "), it.Server))
		}
	}
	return lines
}
