package upstream

import (
	"maps"
	"slices"

	"github.com/pml-go/pml/internal/tools"
)

// State is where a server is in its life, as operators and discover show it.
type State string

const (
	StateIdle     State = "idle"     // configured, not running: never used yet, or stopped when idle
	StateStarting State = "starting" // a start is in progress
	StateReady    State = "ready"    // a live session
	StateFailed   State = "failed"   // the last start failed; Status.Error says why
	StateStopped  State = "stopped"  // removed or the pool closed
)

// Status is a server's state and, after a failed start, why it failed.
// The error stays while a retry is in progress and clears on a successful
// start, so a server that cannot start never looks like one with no tools.
type Status struct {
	State State  `json:"state"`
	Error string `json:"error,omitempty"`
}

// Status reports the server's state without starting it.
func (s *Server) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st Status
	if s.lastErr != nil {
		st.Error = s.lastErr.Error()
	}
	switch {
	case s.closed:
		st.State = StateStopped
	case s.sess != nil && !s.sess.isDead():
		st.State = StateReady
	case s.starting != nil:
		st.State = StateStarting
	case s.lastErr != nil:
		st.State = StateFailed
	default:
		st.State = StateIdle
	}
	return st
}

// Statuses reports every registered server's status by name.
func (p *Pool) Statuses() map[string]Status {
	p.mu.Lock()
	servers := maps.Clone(p.servers)
	p.mu.Unlock()
	out := make(map[string]Status, len(servers))
	for name, s := range servers {
		out[name] = s.Status()
	}
	return out
}

// KnownTools is the last tool list the server returned, without starting
// it; ok is false when it never listed its tools.
func (s *Server) KnownTools() (list []tools.Info, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.known), s.known != nil
}
