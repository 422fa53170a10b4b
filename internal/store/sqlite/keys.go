package sqlite

import (
	"context"
	"fmt"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// CreateKey stores k (ID and CreatedAt are filled when empty).
func (s *Store) CreateKey(ctx context.Context, k store.APIKey) error {
	k, err := storeutil.NewKey(k)
	if err != nil {
		return wrap("create key", err)
	}
	_, err = s.w.ExecContext(ctx,
		`INSERT INTO api_keys (id, hash, org, project, created_at) VALUES ($1, $2, $3, $4, $5)`,
		k.ID, k.Hash, k.Scope.Org, k.Scope.Project, formatTime(k.CreatedAt))
	return wrap("create key", err)
}

// KeyByHash finds the key whose SHA-256 hex is hash.
func (s *Store) KeyByHash(ctx context.Context, hash string) (store.APIKey, error) {
	var (
		k       store.APIKey
		created string
	)
	err := s.r.QueryRowContext(ctx,
		`SELECT id, hash, org, project, created_at FROM api_keys WHERE hash = $1`, hash).
		Scan(&k.ID, &k.Hash, &k.Scope.Org, &k.Scope.Project, &created)
	if err != nil {
		return store.APIKey{}, wrap("key by hash", err)
	}
	if k.CreatedAt, err = parseTime(created); err != nil {
		return store.APIKey{}, wrap("key by hash", err)
	}
	return k, nil
}

// ListKeys lists scope's keys, oldest first (store.Store).
func (s *Store) ListKeys(ctx context.Context, sc store.Scope) ([]store.APIKey, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, hash, org, project, created_at FROM api_keys
		WHERE org = $1 AND project = $2 ORDER BY created_at, id`, sc.Org, sc.Project)
	if err != nil {
		return nil, wrap("list keys", err)
	}
	defer rows.Close()
	var out []store.APIKey
	for rows.Next() {
		var k store.APIKey
		var created string
		if err := rows.Scan(&k.ID, &k.Hash, &k.Scope.Org, &k.Scope.Project, &created); err != nil {
			return nil, wrap("list keys", err)
		}
		if k.CreatedAt, err = parseTime(created); err != nil {
			return nil, wrap("list keys", err)
		}
		out = append(out, k)
	}
	return out, wrap("list keys", rows.Err())
}

// DeleteKey deletes scope's key id (store.Store).
func (s *Store) DeleteKey(ctx context.Context, sc store.Scope, id string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM api_keys WHERE org = $1 AND project = $2 AND id = $3`, sc.Org, sc.Project, id)
	n, err := affected(res, err)
	if err == nil && n == 0 {
		return fmt.Errorf("delete key %s: %w", id, store.ErrNotFound)
	}
	return wrap("delete key", err)
}
