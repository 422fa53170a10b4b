// Package routing decides where a tool runs: on the user's machine ("client")
// or on the gateway ("server"). Rules are patterns "ns", "ns:*" or
// "ns:action"; the most specific matching pattern wins, and code routes to the
// client as soon as one of its tools does.
package routing

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/tools"
)

// Side is where a tool or a piece of code runs.
type Side string

const (
	Client Side = "client"
	Server Side = "server"
)

// Rules is the routing document served at GET /api/v1/routing
// (docs/protocol.md "Routing").
type Rules struct {
	Client  []string `json:"client"`
	Server  []string `json:"server"`
	Default Side     `json:"default"`
	// Local are namespaces served on this machine (the package's built-in
	// client tools, configured servers and dependencies): client whatever
	// the patterns say. Never part of the served document.
	Local []string `json:"-"`
}

//go:embed default.json
var defaultRulesJSON []byte

// Default returns the embedded default rules.
func Default() Rules {
	var r Rules
	if err := json.Unmarshal(defaultRulesJSON, &r); err != nil {
		panic(fmt.Sprintf("routing: embedded default.json: %v", err)) // a build defect, not a runtime condition
	}
	return r
}

// Parse reads rules from JSON and validates them.
func Parse(data []byte) (Rules, error) {
	var r Rules
	if err := json.Unmarshal(data, &r); err != nil {
		return Rules{}, fmt.Errorf("routing rules: %w", err)
	}
	return r, r.Validate()
}

// Validate checks every pattern and the default side.
func (r Rules) Validate() error {
	switch r.Default {
	case Client, Server, "":
	default:
		return fmt.Errorf("routing rules: default must be %q or %q, not %q", Client, Server, r.Default)
	}
	for _, p := range slices.Concat(r.Client, r.Server) {
		if err := validPattern(p); err != nil {
			return fmt.Errorf("routing rules: %w", err)
		}
	}
	return nil
}

func validPattern(p string) error {
	ns, action, hasAction := strings.Cut(p, ":")
	badNS := ns == "" || strings.ContainsAny(ns, " \t*")
	badAction := hasAction && (action == "" || strings.ContainsAny(action, " \t:") || strings.Contains(action, "*") && action != "*")
	if badNS || badAction {
		return fmt.Errorf("bad pattern %q: want ns, ns:* or ns:action", p)
	}
	return nil
}

// Override returns r with o's patterns applied on top: a pattern o lists for
// one side is removed from the other, and o's default wins when set.
func (r Rules) Override(o Rules) Rules {
	out := Rules{Default: r.Default}
	if o.Default != "" {
		out.Default = o.Default
	}
	out.Client = mergePatterns(r.Client, o.Client, o.Server)
	out.Server = mergePatterns(r.Server, o.Server, o.Client)
	return out
}

func mergePatterns(base, add, remove []string) []string {
	var out []string
	for _, p := range slices.Concat(base, add) {
		if !slices.Contains(remove, p) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// WithServer returns r with namespaces added as server patterns, unless r
// already routes them explicitly (the gateway's hosted servers).
func (r Rules) WithServer(namespaces ...string) Rules {
	out := r.Override(Rules{})
	for _, ns := range namespaces {
		if !slices.Contains(out.Client, ns) && !slices.Contains(out.Client, ns+":*") && !slices.Contains(out.Server, ns) {
			out.Server = append(out.Server, ns)
		}
	}
	return out
}

func best(patterns []string, tool string) int {
	m := 0
	for _, p := range patterns {
		m = max(m, tools.PatternSpecificity(p, tool))
	}
	return m
}

// WithLocal returns r with namespaces pinned to the client (Local).
func (r Rules) WithLocal(namespaces []string) Rules {
	r.Local = namespaces
	return r
}

// Route returns where one tool ("ns:action") runs. On a tie between the two
// lists the client wins: code we cannot prove server-safe stays on the user's machine.
func (r Rules) Route(tool string) Side {
	if len(r.Local) > 0 {
		if ns, _ := tools.Split(tool); slices.Contains(r.Local, ns) {
			return Client
		}
	}
	c, s := best(r.Client, tool), best(r.Server, tool)
	switch {
	case c == 0 && s == 0:
		if r.Default == Server {
			return Server
		}
		return Client
	case s > c:
		return Server
	default:
		return Client
	}
}

// Resolve returns where code using tools runs: client if any tool is client,
// server otherwise (including code with no tool at all).
func (r Rules) Resolve(tools []string) Side {
	for _, t := range tools {
		if r.Route(t) == Client {
			return Client
		}
	}
	return Server
}

// ClientTools returns the tools that route to the client, in order.
func (r Rules) ClientTools(tools []string) []string {
	var out []string
	for _, t := range tools {
		if r.Route(t) == Client {
			out = append(out, t)
		}
	}
	return out
}

// JSON returns the canonical encoding of r and its ETag (a quoted SHA-256 prefix).
func (r Rules) JSON() (body []byte, etag string) {
	body, _ = json.Marshal(r) // plain strings only: cannot fail
	sum := sha256.Sum256(body)
	return body, `"` + hex.EncodeToString(sum[:8]) + `"`
}
