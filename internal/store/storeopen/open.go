// Package storeopen picks the store backend from a DSN. It lives apart from
// package store so that store does not import its own backends.
package storeopen

import (
	"context"
	"strings"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/postgres"
	"github.com/pml-go/pml/internal/store/sqlite"
)

// Open opens a PostgreSQL store for a postgres:// or postgresql:// URL and a
// SQLite store for anything else, taken as a file path (":memory:" for a
// private in-memory database).
func Open(ctx context.Context, dsn string) (store.Store, error) {
	lower := strings.ToLower(dsn)
	if strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://") {
		return postgres.Open(ctx, dsn)
	}
	return sqlite.Open(ctx, dsn)
}
