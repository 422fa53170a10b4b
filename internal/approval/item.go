package approval

import (
	"fmt"
	"strings"
	"time"
)

// ItemType is the kind of decision an Item asks for; it is also the
// approval_type of the answer.
type ItemType string

// The approval types of the wire contract.
const (
	TypeToolPermission ItemType = "tool_permission"
	TypeDependency     ItemType = "dependency"
	TypeAPIKey         ItemType = "api_key_required"
	TypeIntegrity      ItemType = "integrity"
)

// Item is one thing a person must decide before a plan can run.
type Item struct {
	Type        ItemType       `json:"type"`
	Description string         `json:"description"` // words a person can decide on
	Tool        string         `json:"tool,omitempty"`
	Server      string         `json:"server,omitempty"`
	Dependency  *Dependency    `json:"dependency,omitempty"`
	Keys        []string       `json:"keys,omitempty"`      // missing env keys
	Integrity   map[string]any `json:"integrity,omitempty"` // fqdn, old_hash, new_hash, old_fetched_at
}

// Dependency is an MCP server the package would install and run locally.
type Dependency struct {
	Name        string   `json:"name"`
	Version     string   `json:"version,omitempty"`
	Command     string   `json:"command"`
	Args        []string `json:"args,omitempty"`
	EnvRequired []string `json:"envRequired,omitempty"`
}

// ToolPermissionItem asks to run a tool that the permissions leave at "ask".
func ToolPermissionItem(toolID string) Item {
	return Item{
		Type:        TypeToolPermission,
		Tool:        toolID,
		Description: fmt.Sprintf("Allow the code to call %s? It is not in the allow list of .pml.json.", toolID),
	}
}

// DependencyItem asks to install and start an MCP server that serves tool.
func DependencyItem(tool string, dep Dependency) Item {
	cmd := strings.TrimSpace(dep.Command + " " + strings.Join(dep.Args, " "))
	name := dep.Name
	if dep.Version != "" {
		name += "@" + dep.Version
	}
	return Item{
		Type:        TypeDependency,
		Tool:        tool,
		Server:      dep.Name,
		Dependency:  &dep,
		Description: fmt.Sprintf("Install the MCP server %s (runs `%s` on this machine) to provide %s?", name, cmd, tool),
	}
}

// APIKeyItem tells the person which keys to add to the workspace .env; the
// continue that follows reloads it.
func APIKeyItem(server string, keys []string) Item {
	return Item{
		Type:        TypeAPIKey,
		Server:      server,
		Keys:        keys,
		Description: fmt.Sprintf("%s needs %s. Add %s to the .env file of the workspace, then continue.", server, strings.Join(keys, ", "), plural(len(keys), "it", "them")),
	}
}

// IntegrityItem asks whether to accept a registry entry whose content hash
// changed since it was locked (spec story 14.7 AC14).
func IntegrityItem(fqdn, oldHash, newHash string, oldFetchedAt time.Time) Item {
	return Item{
		Type: TypeIntegrity,
		Integrity: map[string]any{
			"fqdn":           fqdn,
			"old_hash":       oldHash,
			"new_hash":       newHash,
			"old_fetched_at": oldFetchedAt.UTC().Format(time.RFC3339),
		},
		Description: fmt.Sprintf("The content of %s changed since it was first fetched (old hash %s, new hash %s). "+
			"This could be a legitimate update or a tampered registry. Accept the new version?", fqdn, oldHash, newHash),
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
