package workspace

import (
	"context"
	"encoding/json"
	"maps"
	"sync"
	"time"

	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/upstream"
	"github.com/pml-go/pml/internal/wire"
)

// discoverStartWait is how long discover waits for a local server whose
// tools nobody has listed yet (not this process, not a server record):
// most start within it. A server whose tools are known never holds the
// answer: a first discover waited 8 s for an npx server whose tools the
// catalog already listed (issue 41). Past the wait the answer names the
// server as "starting" (docs/protocol.md "discover").
const discoverStartWait = 3 * time.Second

// discoverStartLimit bounds a start discover leaves running in the
// background (a server's own start timeout is usually shorter).
const discoverStartLimit = 2 * time.Minute

// localToolsForDiscover lists this machine's tools without waiting for
// local servers whose tools are already known: a server not running yet
// answers with the list it gave last (in this process, else its record in
// .pml/servers/) while it starts in the background. starting names the
// servers whose list the answer lacks or took from before their start;
// complete says every list is a live one, which is what the gateway may
// be told (reportTools replaces the previous report).
func (p *Workspace) localToolsForDiscover(ctx context.Context, local *tools.Mux) (list []tools.Info, starting map[string]wire.ServerStatus, err error) {
	var mu sync.Mutex
	starting = map[string]wire.ServerStatus{}
	m := tools.NewMux().WithLogger(p.log)
	for _, ns := range local.Namespaces() {
		prov, _ := local.Provider(ns)
		srv, isServer := p.pool.Server(ns)
		if !isServer || srv.Status().State == upstream.StateReady {
			m.Register(ns, prov)
			continue
		}
		m.Register(ns, knownFirst{p: p, ns: ns, srv: srv, starting: func() {
			mu.Lock()
			defer mu.Unlock()
			starting[ns] = wire.ServerStatus{State: string(upstream.StateStarting)}
		}})
	}
	list, err = m.Tools(ctx)
	mu.Lock()
	defer mu.Unlock()
	return list, maps.Clone(starting), err
}

// knownFirst is a local server, not running, as discover lists it.
type knownFirst struct {
	p        *Workspace
	ns       string
	srv      *upstream.Server
	starting func() // marks the server "starting" in the answer
}

func (k knownFirst) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	return k.srv.Call(ctx, tool, args)
}

// Tools starts the server in the background, bounded by the workspace's
// life, and answers with its known list at once, or waits up to
// discoverStartWait for one nobody has listed.
func (k knownFirst) Tools(ctx context.Context) ([]tools.Info, error) {
	type listed struct {
		list []tools.Info
		err  error
	}
	done := make(chan listed, 1)
	go func() {
		bg, cancel := context.WithTimeout(k.p.closing, discoverStartLimit)
		defer cancel()
		list, err := k.srv.Tools(bg)
		done <- listed{list, err}
	}()
	known, ok := k.srv.KnownTools()
	if !ok {
		_, known, ok = k.p.recordedUse(k.ns)
		ok = ok && known != nil
	}
	if ok {
		k.starting()
		return known, nil
	}
	t := time.NewTimer(discoverStartWait)
	defer t.Stop()
	select {
	case r := <-done:
		return r.list, r.err // a failed start is logged and left out, as before
	case <-t.C:
		k.starting()
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
