package gateway

import (
	"net/http"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/registry/fqdn"
	"github.com/pml-go/pml/internal/wire"
)

// maxClientNamespaces bounds what one request may list.
const maxClientNamespaces = 256

// clientNamespaces reads wire.ClientNamespacesHeader. Names that could not be a namespace
// are ignored, and at most maxClientNamespaces are kept: the list only ever
// moves tools to the caller's own machine, so a bad one harms no one else.
func clientNamespaces(h http.Header) []string {
	var out []string
	for _, v := range h.Values(wire.ClientNamespacesHeader) {
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
