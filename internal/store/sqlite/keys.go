package sqlite

import (
	"context"

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
