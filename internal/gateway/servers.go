package gateway

import (
	"github.com/pml-go/pml/internal/registry"
	"github.com/pml-go/pml/internal/textcut"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/upstream"
	"github.com/pml-go/pml/internal/wire"
)

// maxServerErrorBytes bounds a start error as shown: it may carry the end
// of the server's stderr.
const maxServerErrorBytes = 512

// serverStatuses is the state of each hosted server the gateway runs itself
// (BYOK servers start per call with the caller's keys and have none). A
// start error can quote the server's stderr, and /healthz needs no key, so
// it is shown sanitized and cut.
func (s *Service) serverStatuses() map[string]wire.ServerStatus {
	if s.upstream == nil {
		return nil
	}
	all := s.upstream.Statuses()
	if len(all) == 0 {
		return nil
	}
	san := tracing.NewSanitizer(nil)
	out := make(map[string]wire.ServerStatus, len(all))
	for name, st := range all {
		out[name] = wire.ServerStatus{State: string(st.State), Error: shownError(san, st.Error)}
	}
	return out
}

func shownError(san *tracing.Sanitizer, err string) string {
	if err == "" {
		return ""
	}
	return textcut.Prefix(san.String(err), maxServerErrorBytes)
}

// serverLive is what the registry shows of a hosted server the gateway
// runs: the tools it listed last and, while it fails to start, why (shown
// as on /healthz). It never starts the server.
func (s *Service) serverLive(name string) ([]registry.ServerTool, string) {
	if s.upstream == nil {
		return nil, ""
	}
	srv, ok := s.upstream.Server(name)
	if !ok {
		return nil, ""
	}
	var list []registry.ServerTool
	if known, ok := srv.KnownTools(); ok {
		list = make([]registry.ServerTool, len(known))
		for i, t := range known {
			_, action := tools.Split(t.ID)
			list[i] = registry.ServerTool{Name: action, Description: t.Description}
		}
	}
	st := srv.Status()
	if st.State != upstream.StateFailed && st.State != upstream.StateStarting {
		return list, ""
	}
	return list, shownError(tracing.NewSanitizer(nil), st.Error)
}
