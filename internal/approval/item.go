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
	Type        ItemType    `json:"type"`
	Description string      `json:"description"` // words a person can decide on
	Tool        string      `json:"tool,omitempty"`
	Server      string      `json:"server,omitempty"`
	Dependency  *Dependency `json:"dependency,omitempty"`
	Keys        []string    `json:"keys,omitempty"` // missing env keys
	Integrity   *Integrity  `json:"integrity,omitempty"`
	// One call a tool flagged (a secret read, a hook write): approved for
	// that call only, never "always".
	Access   string `json:"access,omitempty"` // secret_read | hook_write
	Path     string `json:"path,omitempty"`
	ArgsHash string `json:"args_hash,omitempty"`
	Once     bool   `json:"once,omitempty"`
}

// Integrity is what an integrity item is about: the registry name whose
// entry changed, its locked and fetched hashes, and the fetched entry that
// accepting records in the lockfile (integrity, type, routing, content).
type Integrity struct {
	FQDN         string `json:"fqdn"`
	OldHash      string `json:"old_hash"`
	NewHash      string `json:"new_hash"`
	OldFetchedAt string `json:"old_fetched_at"` // RFC 3339, UTC
	Integrity    string `json:"integrity,omitempty"`
	Type         string `json:"type,omitempty"`
	Routing      string `json:"routing,omitempty"`
	Content      string `json:"content,omitempty"`
}

// Dependency is an MCP server the package would install and run locally.
type Dependency struct {
	Name    string   `json:"name"`
	Version string   `json:"version,omitempty"`
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	// Env is the server's environment as configured: literal values are
	// passed as they are, ${VAR}s (the EnvRequired) come from the user.
	Env         map[string]string `json:"env,omitempty"`
	EnvRequired []string          `json:"envRequired,omitempty"`
}

// ToolPermissionItem asks to run a tool that the permissions leave at "ask".
func ToolPermissionItem(toolID string) Item {
	return Item{
		Type:        TypeToolPermission,
		Tool:        toolID,
		Description: fmt.Sprintf("Allow the code to call %s? It is not in the allow list of .pml.json.", toolID),
	}
}

// CallItem asks to run one call of tool, with the arguments hashing to
// argsHash, that the tool itself refused to make unapproved: reading a
// secret file or writing a hook. Its approval covers that call in that
// execution and nothing else.
func CallItem(tool, argsHash, access, path, reason string) Item {
	return Item{
		Type:        TypeToolPermission,
		Tool:        tool,
		Access:      access,
		Path:        path,
		ArgsHash:    argsHash,
		Once:        true,
		Description: fmt.Sprintf("Allow %s on %s? %s. This approval covers this one call only; it is asked every time.", tool, path, reason),
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
// changed since it was locked.
func IntegrityItem(fqdn, oldHash, newHash string, oldFetchedAt time.Time) Item {
	return Item{
		Type: TypeIntegrity,
		Integrity: &Integrity{
			FQDN:         fqdn,
			OldHash:      oldHash,
			NewHash:      newHash,
			OldFetchedAt: oldFetchedAt.UTC().Format(time.RFC3339),
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
