package upstream

import "fmt"

// ServerConfig describes one MCP server, as in .mcp.json / the gateway config.
type ServerConfig struct {
	Name    string            `json:"-"`
	Type    string            `json:"type"` // "stdio" (default when Command set) | "http" | "sse"
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"` // already ${VAR}-substituted by the caller
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Dir     string            `json:"-"` // working directory for stdio servers
	// Auth is a hosted gateway server's OAuth client-credentials grant.
	Auth *Auth `json:"auth,omitempty"`
	// StoredOAuth attaches the token `pml connect URL` stored (a
	// workspace's "auth": "oauth").
	StoredOAuth bool `json:"-"`
}

// Auth is the OAuth client of an http server (docs/configuration.md,
// gateway config): the token endpoint and scopes are discovered from the
// server's protected resource metadata and its authorization server.
type Auth struct {
	Type         string `json:"type"` // AuthClientCredentials
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	// Issuer, when set, is the only authorization server the secret goes to.
	Issuer string `json:"issuer,omitempty"`
}

// AuthClientCredentials is the one Auth.Type: OAuth client credentials.
const AuthClientCredentials = "client_credentials"

// Validate checks the shape of an auth block of a server of type typ.
func (a *Auth) Validate(typ string) error {
	switch {
	case a.Type != AuthClientCredentials:
		return fmt.Errorf("auth.type must be %q, not %q", AuthClientCredentials, a.Type)
	case a.ClientID == "":
		return fmt.Errorf("auth.client_id is required")
	case a.ClientSecret == "":
		return fmt.Errorf("auth.client_secret is required")
	case typ != TypeHTTP:
		return fmt.Errorf("auth needs an http server, not %s", typ)
	}
	return nil
}

// Transport types of ServerConfig.Type.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
	// TypeSSE is the older HTTP+SSE transport (an event stream GET plus
	// POSTs), which Claude Code's .mcp.json still lists as "sse".
	TypeSSE = "sse"
)

// Types lists the transport types a ServerConfig may name.
var Types = []string{TypeStdio, TypeHTTP, TypeSSE}

// transportType resolves an empty Type from the fields that are set and
// checks that the fields the type needs are there.
func (c ServerConfig) transportType() (string, error) {
	typ := c.Type
	if typ == "" {
		switch {
		case c.Command != "":
			typ = TypeStdio
		case c.URL != "":
			typ = TypeHTTP
		default:
			return "", fmt.Errorf("MCP server %s: config needs a command or a url", c.Name)
		}
	}
	switch typ {
	case TypeStdio:
		if c.Command == "" {
			return "", fmt.Errorf("MCP server %s: stdio config needs a command", c.Name)
		}
	case TypeHTTP, TypeSSE:
		if c.URL == "" {
			return "", fmt.Errorf("MCP server %s: %s config needs a url", c.Name, typ)
		}
	default:
		return "", fmt.Errorf("MCP server %s: unsupported type %q (want %q, %q or %q)", c.Name, typ, TypeStdio, TypeHTTP, TypeSSE)
	}
	return typ, nil
}
