package fqdn

// The org, project and action under which MCP servers are published
// ("pml.mcp.<server>.server.<hash>", docs/protocol.md "Registry").
const (
	mcpOrg     = "pml"
	mcpProject = "mcp"
	mcpAction  = "server"
)

// ForCode names a capability or built-in tool by its source code
// (org "pml", project "std" for built-ins) and returns its integrity.
func ForCode(org, project, ns, action, code string) (Name, string) {
	integrity := Integrity([]byte(code))
	return Name{Org: org, Project: project, Namespace: ns, Action: action, Hash: Hash4(integrity)}, integrity
}

// ForStdio names a stdio MCP server "pml.mcp.<name>.server.<hash>". Its
// integrity is the package's own integrity when that is known and well formed
// (npm's "sha512-<base64>" is), because that is what changes when the package
// is compromised; otherwise it is the integrity of the canonical JSON of meta
// (the install metadata). It returns the zero Name and "" when it needs meta
// and meta cannot be encoded as JSON.
func ForStdio(name string, meta any, packageIntegrity string) (Name, string) {
	if h := Hash4(packageIntegrity); h != "" {
		return Name{Org: mcpOrg, Project: mcpProject, Namespace: name, Action: mcpAction, Hash: h}, packageIntegrity
	}
	return forMeta(name, meta)
}

// ForHTTP names an HTTP MCP server "pml.mcp.<name>.server.<hash>" by the
// integrity of the canonical JSON of meta (its proxy metadata), so a changed
// proxy URL is a new name. It returns the zero Name and "" when meta cannot
// be encoded as JSON.
func ForHTTP(name string, meta any) (Name, string) {
	return forMeta(name, meta)
}

func forMeta(name string, meta any) (Name, string) {
	canon, err := CanonicalJSON(meta)
	if err != nil {
		return Name{}, ""
	}
	integrity := Integrity(canon)
	return Name{Org: mcpOrg, Project: mcpProject, Namespace: name, Action: mcpAction, Hash: Hash4(integrity)}, integrity
}
