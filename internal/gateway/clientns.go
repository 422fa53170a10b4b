package gateway

import (
	"net/http"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/registry/fqdn"
)

// ClientNamespacesHeader lists, comma-separated, the namespaces the PML
// package serves on its machine: its built-in client tools, the servers of
// its .pml.json and its installed dependencies. The gateway routes every
// tool of those namespaces to the client and never resolves one to a
// capability, so whatever the store holds, the package's own tools answer
// its calls (README "Tenants and names").
const ClientNamespacesHeader = "X-PML-Client-Namespaces"

// maxClientNamespaces bounds what one request may list.
const maxClientNamespaces = 256

// FormatClientNamespaces is the header value for namespaces.
func FormatClientNamespaces(namespaces []string) string {
	return strings.Join(slices.Sorted(slices.Values(namespaces)), ",")
}

// clientNamespaces reads the header. Names that could not be a namespace
// are ignored, and at most maxClientNamespaces are kept: the list only ever
// moves tools to the caller's own machine, so a bad one harms no one else.
func clientNamespaces(h http.Header) []string {
	var out []string
	for _, v := range h.Values(ClientNamespacesHeader) {
		for ns := range strings.SplitSeq(v, ",") {
			ns = strings.TrimSpace(ns)
			if len(out) == maxClientNamespaces {
				return out
			}
			if ns != "" && len(ns) <= fqdn.MaxPartLen && validNamespace(ns) && !slices.Contains(out, ns) {
				out = append(out, ns)
			}
		}
	}
	return out
}

// servesLocally reports whether the caller's package serves namespace ns.
func (c Caller) servesLocally(ns string) bool { return slices.Contains(c.ClientNamespaces, ns) }
