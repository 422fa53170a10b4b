package approval

// DefaultPermissions is what `pml init` writes to .pml.json.
//
// The choice: tools that only read the user's files run without a prompt, as
// do the gateway's std namespaces, which compute on their arguments and touch
// nothing on the machine. Tools that change the filesystem and the shell,
// which can do anything the user can, ask every time. Nothing is denied:
// a denied tool fails with no way to approve it, which would surprise a
// first-time user; people add denies themselves. Any tool not listed (an
// installed MCP server's tools, other filesystem actions) falls to the
// default, ask, so a new tool is never silently trusted.
func DefaultPermissions() Permissions {
	return Permissions{
		Allow: []string{
			"filesystem:read_file",
			"filesystem:list_directory",
			"filesystem:stat",
			"filesystem:search_files",
			"json",
			"math",
			"string",
			"datetime",
			"crypto",
			"encoding",
			"collections",
		},
		Deny: []string{},
		Ask: []string{
			"filesystem:write_file",
			"filesystem:make_directory",
			"filesystem:move_file",
			"shell",
		},
	}
}
