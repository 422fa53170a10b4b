package registry

import (
	"context"
	"errors"

	"github.com/pml-go/pml/internal/store"
)

// Save stores a capability learned from a successful run. The store
// deduplicates by code hash within a project; here, concurrent saves of the
// same code in the same project share one write, so a burst of identical
// runs (a thousand executions finishing at once) costs one trip to the
// single SQLite writer instead of a thousand. Its usage count then grows by
// one for the burst.
func (r *Registry) Save(ctx context.Context, c store.Capability) (store.Capability, error) {
	if r.store == nil {
		return store.Capability{}, errors.New("registry: no store to save capabilities in")
	}
	key := c.Scope.Org + "\x00" + c.Scope.Project + "\x00" + c.CodeHash
	v, err, _ := r.saves.Do(key, func() (any, error) {
		return r.store.SaveCapability(ctx, c)
	})
	if err != nil {
		return store.Capability{}, err
	}
	saved := v.(store.Capability)
	if saved.UsageCount == 1 { // new: it may be the current version of a name
		r.lookups.Clear()
	}
	return saved, nil
}

// Update changes a capability's name, description, visibility or argument
// schema (store.UpdateCapability) and forgets cached lookups.
func (r *Registry) Update(ctx context.Context, c store.Capability) error {
	if r.store == nil {
		return errors.New("registry: no store to update capabilities in")
	}
	defer r.lookups.Clear()
	return r.store.UpdateCapability(ctx, c)
}

// Relearn stores what learning refined in a capability (store.UpdateLearned)
// and forgets cached lookups, so the next call runs the refined code.
func (r *Registry) Relearn(ctx context.Context, c store.Capability) error {
	if r.store == nil {
		return errors.New("registry: no store to update capabilities in")
	}
	defer r.lookups.Clear()
	return r.store.UpdateLearned(ctx, c)
}

// Rename renames every version of scope's capability from to, keeping from
// as its old name (store.RenameCapability), and forgets cached lookups.
func (r *Registry) Rename(ctx context.Context, scope store.Scope, from, to store.CapabilityName) error {
	if r.store == nil {
		return errors.New("registry: no store to rename capabilities in")
	}
	defer r.lookups.Clear()
	return r.store.RenameCapability(ctx, scope, from, to)
}

// Forget deletes every version of scope's capability name
// (store.ForgetCapability), and forgets cached lookups.
func (r *Registry) Forget(ctx context.Context, scope store.Scope, name store.CapabilityName) error {
	if r.store == nil {
		return errors.New("registry: no store to forget capabilities in")
	}
	defer r.lookups.Clear()
	return r.store.ForgetCapability(ctx, scope, name)
}
