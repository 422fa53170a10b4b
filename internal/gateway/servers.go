package gateway

import (
	"github.com/pml-go/pml/internal/textcut"
	"github.com/pml-go/pml/internal/tracing"
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
		ws := wire.ServerStatus{State: string(st.State)}
		if st.Error != "" {
			ws.Error = textcut.Prefix(san.String(st.Error), maxServerErrorBytes)
		}
		out[name] = ws
	}
	return out
}
