package registry

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/routing"
)

// Live tells what the gateway knows now of a hosted server: the tools it
// listed last (nil when it never did) and, while its starts fail, why.
type Live func(server string) (tools []ServerTool, startError string)

// Warnings of a server entry (docs/protocol.md "Registry").
const (
	warnInstalled    = "installed and run on your machine"
	warnReachedLocal = "called from your machine"
	warnHosted       = "hosted: runs on the gateway"
	warnKeysPrefix   = "requires keys: "
	warnFailedPrefix = "failed to start: "
)

// staticWarnings are what a user should know before using a server, from
// its configuration alone.
func staticWarnings(hosted bool, t Type, envRequired []string) []string {
	var w []string
	switch {
	case hosted:
		w = append(w, warnHosted)
	case t == TypeStdio:
		w = append(w, warnInstalled)
	default:
		w = append(w, warnReachedLocal)
	}
	if len(envRequired) > 0 {
		w = append(w, warnKeysPrefix+strings.Join(envRequired, ", "))
	}
	return w
}

// withLive returns the server entry e with its tools and warnings as live
// reports them now. Only the body changes: its name and integrity do not
// cover tools or warnings (MetadataIntegrity).
func (r *Registry) withLive(e Entry) Entry {
	if r.live == nil || e.Type == TypeCode {
		return e
	}
	name := e.Name.Namespace
	m, ok := r.servers[name]
	if !ok || m.Routing != routing.Server {
		return e // only hosted servers run on the gateway
	}
	list, startErr := r.live(name)
	if list != nil {
		m.Tools = list
	}
	if startErr != "" {
		m.Warnings = append(slices.Clone(m.Warnings), warnFailedPrefix+startErr)
	}
	body, err := json.Marshal(m)
	if err != nil {
		return e // Metadata always marshals; the static body stays right
	}
	e.Body = body
	return e
}
