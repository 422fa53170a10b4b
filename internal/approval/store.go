package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/pml-go/pml/internal/pmlerr"
)

// DefaultTTL is how long a paused workflow waits for its continue_workflow.
const DefaultTTL = 5 * time.Minute

// Workflow is a run paused for approval, kept until the AI client answers;
// Run is whatever its owner needs to resume it (the package's pending run).
type Workflow[R any] struct {
	ID        string
	CodeHash  string // bound to the code: a continue with other code is rejected
	Code      string
	Items     []Item
	Journal   *Journal // calls completed before a mid-run pause
	Run       R
	CreatedAt time.Time
}

// CodeHash is the SHA-256 hex of code, the value Workflow.CodeHash holds.
func CodeHash(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

// CheckCode rejects a continue_workflow whose code is not the code that was
// paused, so an approval given for one snippet cannot be spent on another.
// Empty code means "the paused code" and is accepted.
func (w Workflow[R]) CheckCode(code string) error {
	if code == "" || CodeHash(code) == w.CodeHash {
		return nil
	}
	return pmlerr.New(pmlerr.InvalidRequest,
		"continue_workflow for %s carries different code than the code that was approved; run it as a new execute", w.ID).
		With("workflow_id", w.ID)
}

// Store holds paused workflows in memory. The package is a
// long-lived process tied to its MCP connection, so losing the map when the
// process exits loses nothing the client could still continue.
//
// Expired entries are purged on Create and Take; no goroutine is needed.
// R is the type of the paused runs it holds.
type Store[R any] struct {
	ttl time.Duration
	now func() time.Time

	mu        sync.Mutex
	workflows map[string]Workflow[R]
}

// NewStore returns an empty store. ttl <= 0 means DefaultTTL; now nil means time.Now.
func NewStore[R any](ttl time.Duration, now func() time.Time) *Store[R] {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Store[R]{ttl: ttl, now: now, workflows: map[string]Workflow[R]{}}
}

// Create stores w under a new random ID, stamps CreatedAt, fills CodeHash
// from Code when empty, and returns the stored value.
func (s *Store[R]) Create(w Workflow[R]) Workflow[R] {
	if w.ID == "" {
		w.ID = uuid.NewString()
	}
	if w.CodeHash == "" {
		w.CodeHash = CodeHash(w.Code)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w.CreatedAt = s.now()
	s.purgeLocked(w.CreatedAt)
	s.workflows[w.ID] = w
	return w
}

// Take removes the workflow and returns it: a workflow continues at most
// once. Unknown, already taken or expired IDs are WORKFLOW_NOT_FOUND.
func (s *Store[R]) Take(id string) (Workflow[R], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	w, ok := s.workflows[id]
	delete(s.workflows, id)
	s.purgeLocked(now)
	if !ok {
		return Workflow[R]{}, pmlerr.New(pmlerr.WorkflowNotFound,
			"workflow %q is not pending: it was never created, was already continued, or expired", id).
			With("workflow_id", id)
	}
	if s.expired(w, now) {
		return Workflow[R]{}, pmlerr.New(pmlerr.WorkflowNotFound,
			"workflow %q expired: approvals must come within %s; run the code again", id, s.ttl).
			With("workflow_id", id)
	}
	return w, nil
}

// Len is the number of stored workflows, expired ones not yet purged included.
func (s *Store[R]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.workflows)
}

func (s *Store[R]) expired(w Workflow[R], now time.Time) bool {
	return now.Sub(w.CreatedAt) >= s.ttl
}

func (s *Store[R]) purgeLocked(now time.Time) {
	for id, w := range s.workflows {
		if s.expired(w, now) {
			delete(s.workflows, id)
		}
	}
}
