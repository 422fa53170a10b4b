package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/pml-go/pml/internal/pmlerr"
)

// maxSuggestions bounds the "did you mean" list of an UNKNOWN_TOOL error.
const maxSuggestions = 3

// Mux routes "ns:action" to the Provider registered for ns. It is itself a
// Provider, so muxes nest. Safe for concurrent use.
type Mux struct {
	mu        sync.RWMutex
	providers map[string]Provider
	log       *slog.Logger
}

// NewMux returns an empty Mux that logs to slog.Default().
func NewMux() *Mux {
	return &Mux{providers: map[string]Provider{}, log: slog.Default()}
}

// WithLogger sets the logger used to report provider failures in Tools and
// returns m.
func (m *Mux) WithLogger(l *slog.Logger) *Mux {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.log = l
	return m
}

// Register routes namespace to p. A later registration of the same namespace
// replaces the earlier one.
func (m *Mux) Register(namespace string, p Provider) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.providers[namespace] = p
}

// Unregister removes namespace's route; it is a no-op for an unknown namespace.
func (m *Mux) Unregister(namespace string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.providers, namespace)
}

// Provider returns the provider registered for namespace.
func (m *Mux) Provider(namespace string) (Provider, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	p, ok := m.providers[namespace]
	return p, ok
}

// Namespaces returns the registered namespaces, sorted.
func (m *Mux) Namespaces() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.namespacesLocked()
}

// route is one provider and the namespaces the mux sends to it. A provider
// serving several namespaces is asked for its tools once.
type route struct {
	p          Provider
	namespaces []string
}

func (m *Mux) routes() []route {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []route
	for _, ns := range m.namespacesLocked() {
		p := m.providers[ns]
		i := slices.IndexFunc(out, func(r route) bool { return sameProvider(r.p, p) })
		if i < 0 {
			out = append(out, route{p: p, namespaces: []string{ns}})
			continue
		}
		out[i].namespaces = append(out[i].namespaces, ns)
	}
	return out
}

func (m *Mux) namespacesLocked() []string {
	ns := make([]string, 0, len(m.providers))
	for n := range m.providers {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

// sameProvider compares without panicking on providers of non-comparable
// dynamic types (which are then treated as distinct).
func sameProvider(a, b Provider) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	if ta != tb || !ta.Comparable() {
		return false
	}
	return a == b
}

// Tools lists the tools of every provider, sorted by id. Only the tools in a
// namespace routed to their provider are listed (a provider serving "a" and "b"
// registered only for "a" contributes its "a:" tools). A provider that fails
// is logged and skipped so one broken upstream server does not hide the rest.
func (m *Mux) Tools(ctx context.Context) ([]Info, error) {
	routes := m.routes()
	lists := make([][]Info, len(routes))
	var wg sync.WaitGroup
	for i, r := range routes {
		wg.Go(func() {
			infos, err := r.p.Tools(ctx)
			if err != nil {
				m.logger().WarnContext(ctx, "tool provider failed to list its tools",
					"namespaces", r.namespaces, "err", err)
				return
			}
			for _, info := range infos {
				if slices.Contains(r.namespaces, info.Namespace()) {
					lists[i] = append(lists[i], info)
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list tools: %w", err)
	}
	all := slices.Concat(lists...)
	slices.SortFunc(all, func(a, b Info) int { return strings.Compare(a.ID, b.ID) })
	return all, nil
}

func (m *Mux) logger() *slog.Logger {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.log
}

// Call routes id to its namespace's provider. An unknown namespace, or an
// UNKNOWN_TOOL from the provider, becomes an UNKNOWN_TOOL error that suggests
// the nearest existing tools.
func (m *Mux) Call(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
	ns, _ := Split(id)
	p, ok := m.Provider(ns)
	if !ok {
		return nil, m.unknownTool(ctx, id, nil)
	}
	out, err := p.Call(ctx, id, args)
	if err != nil {
		if pe, ok := pmlerr.As(err); ok && pe.Code == pmlerr.UnknownTool {
			if _, has := pe.Details["suggestions"]; !has {
				return nil, m.unknownTool(ctx, id, pe)
			}
		}
		return nil, err
	}
	return out, nil
}

// unknownTool builds the UNKNOWN_TOOL error for id, keeping cause's code
// chain when the provider reported it.
func (m *Mux) unknownTool(ctx context.Context, id string, cause *pmlerr.Error) error {
	infos, _ := m.Tools(ctx)
	e := UnknownToolError(id, infos)
	if cause != nil {
		e.Err = cause
	}
	return e
}

// UnknownToolError returns the UNKNOWN_TOOL error for id, naming up to three
// of the nearest candidates in its message and its "suggestions" detail, and
// giving their compact declarations in "declarations" (docs/protocol.md
// "Error"): the AI client can fix its call without another discover.
func UnknownToolError(id string, candidates []Info) *pmlerr.Error {
	ids := make([]string, len(candidates))
	for i, c := range candidates {
		ids[i] = c.ID
	}
	sugg := Nearest(id, ids, maxSuggestions)
	msg := fmt.Sprintf("unknown tool %q", id)
	if len(sugg) > 0 {
		msg += "; did you mean " + strings.Join(quoteAll(sugg), ", ") + "?"
	}
	decls := make([]string, 0, len(sugg))
	for _, s := range sugg {
		decls = append(decls, CompactDeclaration(candidates[slices.Index(ids, s)]))
	}
	if sugg == nil {
		sugg = []string{}
	}
	return pmlerr.New(pmlerr.UnknownTool, "%s", msg).With("suggestions", sugg).With("declarations", decls).With("tool", id)
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}

var _ Provider = (*Mux)(nil)
