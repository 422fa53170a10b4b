package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

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

// ListKeys lists scope's keys, oldest first (store.Store).
func (s *Store) ListKeys(ctx context.Context, sc store.Scope) ([]store.APIKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, hash, org, project, created_at FROM api_keys
		WHERE org = $1 AND project = $2 ORDER BY created_at, id`, sc.Org, sc.Project)
	if err != nil {
		return nil, wrap(ctx, "list keys", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.APIKey, error) {
		var k store.APIKey
		err := r.Scan(&k.ID, &k.Hash, &k.Scope.Org, &k.Scope.Project, &k.CreatedAt)
		k.CreatedAt = k.CreatedAt.UTC()
		return k, err
	})
	return out, wrap(ctx, "list keys", err)
}

// DeleteKey deletes scope's key id (store.Store).
func (s *Store) DeleteKey(ctx context.Context, sc store.Scope, id string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM api_keys WHERE org = $1 AND project = $2 AND id = $3`, sc.Org, sc.Project, id)
	if err == nil && tag.RowsAffected() == 0 {
		return fmt.Errorf("delete key %s: %w", id, store.ErrNotFound)
	}
	return wrap(ctx, "delete key", err)
}
