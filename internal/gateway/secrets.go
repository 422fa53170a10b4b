package gateway

import (
	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/learning"
	"github.com/pml-go/pml/internal/lru"
	"github.com/pml-go/pml/internal/registry"
	"github.com/pml-go/pml/internal/sanitize"
)

// holdsSecret reports whether any of texts (a capability's code, its
// intent) holds a literal secret by the trace sanitizer's secret rules. Such
// code is not learned, and a capability stored before that rule is never
// served (docs/security.md "Tenants and names").
func holdsSecret(texts ...string) bool {
	san := sanitize.New(nil)
	for _, t := range texts {
		if san.HasSecret(t) {
			return true
		}
	}
	return false
}

// secretChecks remembers holdsSecret per content integrity: the registry
// serves the same entries over and over, and the rules cost tens of
// microseconds per kilobyte of code.
type secretChecks = lru.Cache[string, bool]

const secretChecksSize = 10_000

func newSecretChecks() *secretChecks {
	return lru.New[string, bool](secretChecksSize, secretChecksSize*128)
}

// withheld reports whether e is a capability whose code holds a secret,
// literal or built from constants.
func (s *Service) withheld(e registry.Entry) bool {
	if e.Capability == nil {
		return false
	}
	if v, ok := s.secretChecks.Get(e.Integrity); ok {
		return v
	}
	held := holdsSecret(string(e.Body))
	if !held {
		// Code learned before its folded strings were checked
		// (learning.Learner.Learn) may build a secret from parts.
		if folded, err := analysis.Fold(e.Capability.Code); err == nil {
			held = learning.FoldedSecret(folded, sanitize.New(nil).HasSecret)
		}
	}
	return s.secretChecks.Add(e.Integrity, held, len(e.Integrity))
}
