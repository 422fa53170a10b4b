package postgres

import (
	"context"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// CreateKey stores k (ID and CreatedAt are filled when empty).
func (s *Store) CreateKey(ctx context.Context, k store.APIKey) error {
	k, err := storeutil.NewKey(k)
	if err != nil {
		return wrap(ctx, "create key", err)
	}
	_, err = s.pool.Exec(ctx,
		`INSERT INTO api_keys (id, hash, org, project, created_at) VALUES ($1, $2, $3, $4, $5)`,
		k.ID, k.Hash, k.Scope.Org, k.Scope.Project, k.CreatedAt)
	return wrap(ctx, "create key", err)
}

// KeyByHash finds the key whose SHA-256 hex is hash.
func (s *Store) KeyByHash(ctx context.Context, hash string) (store.APIKey, error) {
	var k store.APIKey
	err := s.pool.QueryRow(ctx,
		`SELECT id, hash, org, project, created_at FROM api_keys WHERE hash = $1`, hash).
		Scan(&k.ID, &k.Hash, &k.Scope.Org, &k.Scope.Project, &k.CreatedAt)
	if err != nil {
		return store.APIKey{}, wrap(ctx, "key by hash", err)
	}
	k.CreatedAt = k.CreatedAt.UTC()
	return k, nil
}
