package storeutil

import (
	"context"
	"time"

	"github.com/pml-go/pml/internal/store"
)

// Pruner is a backend's three statements of a retention pass.
type Pruner struct {
	// ByAge deletes up to limit traces started before before.
	ByAge func(ctx context.Context, before time.Time, limit int) (int, error)
	// ScopesOver lists the scopes holding more than keep traces.
	ScopesOver func(ctx context.Context, keep int) ([]store.Scope, error)
	// TrimScope deletes up to limit traces of sc past its keep newest.
	TrimScope func(ctx context.Context, sc store.Scope, keep, limit int) (int, error)
}

// PruneTraces runs one retention pass (store.Store.PruneTraces) with p:
// the age limit first, then the count of each scope, at most r.Limit
// deletions in all.
func PruneTraces(ctx context.Context, r store.TraceRetention, p Pruner) (int, error) {
	limit := r.Limit
	if limit <= 0 {
		limit = store.DefaultPruneLimit
	}
	deleted := 0
	if !r.Before.IsZero() {
		n, err := p.ByAge(ctx, Time(r.Before), limit)
		if err != nil {
			return 0, err
		}
		deleted += n
	}
	if r.Keep <= 0 || deleted >= limit {
		return deleted, nil
	}
	scopes := r.Scopes
	if scopes == nil {
		var err error
		if scopes, err = p.ScopesOver(ctx, r.Keep); err != nil {
			return deleted, err
		}
	}
	for _, sc := range scopes {
		if deleted >= limit {
			break
		}
		n, err := p.TrimScope(ctx, sc, r.Keep, limit-deleted)
		if err != nil {
			return deleted, err
		}
		deleted += n
	}
	return deleted, nil
}
