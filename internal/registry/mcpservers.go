package registry

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"

	"github.com/pml-go/pml/internal/registry/fqdn"
	"github.com/pml-go/pml/internal/routing"
)

// Server is an MCP server of the gateway configuration.
type Server struct {
	Name        string
	Hosted      bool   // runs on the gateway; otherwise packages install it
	Transport   string // "stdio", "http" or "sse"
	Command     string
	Args        []string
	URL         string
	Env         map[string]string // an installed server's environment: literals and ${VAR}s
	EnvRequired []string          // keys the user must provide
	Description string
}

// Metadata is the JSON of a stdio or http entry.
type Metadata struct {
	FQDN        string       `json:"fqdn,omitempty"`
	Type        Type         `json:"type"`
	Description string       `json:"description"`
	Routing     routing.Side `json:"routing"`
	Install     *Install     `json:"install,omitempty"`
	ProxyTo     string       `json:"proxyTo,omitempty"`
	EnvRequired []string     `json:"envRequired,omitempty"`
	Integrity   string       `json:"integrity,omitempty"`
	// Tools and Warnings describe the server as the gateway knows it now
	// (Options.Live): they are outside the integrity (MetadataIntegrity).
	Tools    []ServerTool `json:"tools"`
	Warnings []string     `json:"warnings"`
}

// ServerTool is one tool of a server: its action name and description.
type ServerTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Install is how a package starts a stdio server.
type Install struct {
	Command     string            `json:"command"`
	Args        []string          `json:"args"`
	Env         map[string]string `json:"env,omitempty"`
	EnvRequired []string          `json:"envRequired,omitempty"`
}

// metadataOf describes s. A hosted server is type http, routing server: the
// package reaches its tools through the gateway, so its proxyTo is only the
// upstream's origin (a full URL may carry a token in its path or query). A
// server packages install is type stdio, routing client.
func metadataOf(s Server) Metadata {
	m := Metadata{Description: s.Description, Tools: []ServerTool{}}
	envRequired := slices.Sorted(slices.Values(s.EnvRequired))
	remote := s.Transport == "http" || s.Transport == "sse" // reached over HTTP, by URL
	switch {
	case s.Hosted:
		m.Type, m.Routing, m.EnvRequired = TypeHTTP, routing.Server, envRequired
		if remote {
			m.ProxyTo = origin(s.URL)
		}
	case remote:
		m.Type, m.Routing, m.ProxyTo, m.EnvRequired = TypeHTTP, routing.Client, s.URL, envRequired
	default:
		m.Type, m.Routing = TypeStdio, routing.Client
		m.Install = &Install{Command: s.Command, Args: nonNil(s.Args), Env: s.Env, EnvRequired: envRequired}
	}
	m.Warnings = staticWarnings(s.Hosted, m.Type, envRequired)
	return m
}

func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// serverEntry publishes s as "pml.mcp.<name>.server.<hash>", the hash taken
// over its metadata (MetadataIntegrity), so any change a package would act
// on — command, arguments, keys, proxy — is a new version its lockfile sees.
func serverEntry(s Server) (Entry, Metadata, error) {
	m := metadataOf(s)
	raw, err := json.Marshal(m)
	if err != nil {
		return Entry{}, Metadata{}, fmt.Errorf("server %s: %w", s.Name, err)
	}
	unsigned, err := unsignedMetadata(raw)
	if err != nil {
		return Entry{}, Metadata{}, fmt.Errorf("server %s: %w", s.Name, err)
	}
	var n fqdn.Name
	var integrity string
	if m.Type == TypeStdio {
		n, integrity = fqdn.ForStdio(s.Name, unsigned, "") // no package integrity in the config: the metadata names it
	} else {
		n, integrity = fqdn.ForHTTP(s.Name, unsigned)
	}
	if err := n.Validate(); err != nil {
		return Entry{}, Metadata{}, fmt.Errorf("server %s: %w", s.Name, err)
	}
	m.FQDN, m.Integrity = n.String(), integrity
	body, err := json.Marshal(m)
	if err != nil {
		return Entry{}, Metadata{}, fmt.Errorf("server %s: %w", s.Name, err)
	}
	return Entry{
		Name:        n,
		Type:        m.Type,
		Routing:     m.Routing,
		Description: s.Description,
		Integrity:   integrity,
		Body:        body,
		Shared:      true,
	}, m, nil
}

// MetadataIntegrity is the integrity of a stdio or http entry's JSON: the
// SHA-256 of its canonical form without the "fqdn" and "integrity" members,
// which are derived from it, nor "warnings", and with "tools" empty. Tools
// and warnings change while the server runs (a start, a failure) with
// nothing a package acts on; hashing "tools" as the empty list every entry
// carried before they were filled keeps the names and integrities lockfiles
// already pin. Gateway and package both compute it with this function, so
// the package can check what it received.
func MetadataIntegrity(body []byte) (string, error) {
	unsigned, err := unsignedMetadata(body)
	if err != nil {
		return "", err
	}
	canon, err := fqdn.CanonicalJSON(unsigned)
	if err != nil {
		return "", fmt.Errorf("registry metadata: %w", err)
	}
	return fqdn.Integrity(canon), nil
}

func unsignedMetadata(body []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("registry metadata: %w", err)
	}
	delete(m, "fqdn")
	delete(m, "integrity")
	delete(m, "warnings")
	m["tools"] = json.RawMessage("[]")
	return m, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
