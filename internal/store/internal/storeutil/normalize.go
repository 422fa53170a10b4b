package storeutil

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pml-go/pml/internal/rawjson"
	"github.com/pml-go/pml/internal/store"
)

// NewCapability fills the defaults of a capability about to be inserted
// (ID, CodeHash, Visibility, UsageCount, timestamps) and validates it.
func NewCapability(c store.Capability) (store.Capability, error) {
	if c.ID == "" {
		c.ID = NewID()
	}
	if c.CodeHash == "" {
		sum := sha256.Sum256([]byte(c.Code))
		c.CodeHash = hex.EncodeToString(sum[:])
	}
	if c.Visibility == "" {
		c.Visibility = store.VisibilityPrivate
	}
	if c.UsageCount < 1 {
		c.UsageCount = 1
	}
	if c.ToolsUsed == nil {
		c.ToolsUsed = []string{}
	}
	now := Now()
	c.CreatedAt, c.UpdatedAt = now, now
	if err := validateCapability(c); err != nil {
		return store.Capability{}, err
	}
	return c, nil
}

// UpdatedCapability validates the mutable fields of an update and stamps it.
func UpdatedCapability(c store.Capability) (store.Capability, error) {
	if c.ID == "" {
		return store.Capability{}, errors.New("capability id is empty")
	}
	c.UpdatedAt = Now()
	return c, validateCapability(c)
}

func validateCapability(c store.Capability) error {
	if c.Namespace == "" || c.Action == "" {
		return fmt.Errorf("capability %q: namespace and action are required", c.ID)
	}
	if !ValidVisibility(c.Visibility) {
		return fmt.Errorf("capability %q: invalid visibility %q", c.ID, c.Visibility)
	}
	if err := ValidJSON("args_schema", c.ArgsSchema); err != nil {
		return fmt.Errorf("capability %q: %w", c.ID, err)
	}
	return nil
}

// ValidVisibility reports whether v is one of the four known visibilities.
func ValidVisibility(v store.Visibility) bool {
	switch v {
	case store.VisibilityPrivate, store.VisibilityProject, store.VisibilityOrg, store.VisibilityPublic:
		return true
	}
	return false
}

// ValidJSON rejects malformed JSON up front: PostgreSQL's jsonb would refuse
// it while SQLite's TEXT would keep it, and both backends must agree.
// Empty means "absent" and is valid.
func ValidJSON(field string, raw json.RawMessage) error {
	if len(raw) > 0 && !rawjson.Valid(raw) {
		return fmt.Errorf("%s is not valid JSON", field)
	}
	return nil
}

// NewTraces validates a batch of traces and fills their defaults.
func NewTraces(traces []store.Trace) ([]store.Trace, error) {
	out := make([]store.Trace, len(traces))
	now := Now()
	for i, t := range traces {
		// A trace without an ID could not be deduplicated when re-sent.
		if t.ID == "" {
			return nil, fmt.Errorf("trace %d: id is empty", i)
		}
		if err := ValidJSON("body", t.Body); err != nil {
			return nil, fmt.Errorf("trace %q: %w", t.ID, err)
		}
		if t.StartedAt.IsZero() {
			t.StartedAt = now
		}
		t.StartedAt = Time(t.StartedAt)
		// A start in the future would stay the newest and write rollups
		// every dashboard range shows (docs/limits.md "What a posted trace
		// may say").
		if t.StartedAt.After(now.Add(store.MaxClockSkew)) {
			return nil, fmt.Errorf("%w: trace %q: started_at %s is more than %v ahead of now", store.ErrInvalid,
				t.ID, t.StartedAt.Format(time.RFC3339), store.MaxClockSkew)
		}
		if t.ReceivedAt.IsZero() {
			t.ReceivedAt = now
		}
		t.ReceivedAt = Time(t.ReceivedAt)
		if t.Tools == nil {
			t.Tools = []string{}
		}
		out[i] = t
	}
	return out, nil
}

// NewKey validates a key about to be created and fills its defaults.
func NewKey(k store.APIKey) (store.APIKey, error) {
	if k.Hash == "" {
		return store.APIKey{}, errors.New("api key hash is empty")
	}
	if k.ID == "" {
		k.ID = NewID()
	}
	if k.CreatedAt.IsZero() {
		k.CreatedAt = Now()
	}
	k.CreatedAt = Time(k.CreatedAt)
	return k, nil
}

// CheckClientTools validates a client's report.
func CheckClientTools(clientID string, tools []store.ClientTool) error {
	if clientID == "" {
		return fmt.Errorf("%w: client id is empty", store.ErrInvalid)
	}
	if len(tools) > store.MaxClientToolsPerReport {
		return fmt.Errorf("%w: the report lists %d tools; at most %d", store.ErrInvalid, len(tools), store.MaxClientToolsPerReport)
	}
	for _, t := range tools {
		if t.ID == "" {
			return fmt.Errorf("%w: client tool id is empty", store.ErrInvalid)
		}
		if err := ValidJSON("input_schema", t.InputSchema); err != nil {
			return fmt.Errorf("%w: client tool %q: %w", store.ErrInvalid, t.ID, err)
		}
	}
	return nil
}

// Page returns limit and offset clamped to sane values (0 limit: no limit).
func Page(limit, offset int) (int, int) {
	return max(limit, 0), max(offset, 0)
}
