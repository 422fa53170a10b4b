package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrationLock is the pg_advisory_lock key that serialises migrations
// between replicas starting at once ("pmlmigr" in ASCII).
const migrationLock int64 = 0x706d6c6d696772

// migrate applies pending migrations, each in its own transaction, while
// holding a session advisory lock: a second replica starting at the same
// time waits, then finds nothing left to do.
func (s *Store) migrate(ctx context.Context) (err error) {
	migrations, err := storeutil.LoadMigrations(migrationFS, "migrations")
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return wrap(ctx, "migrate: acquire connection", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return wrap(ctx, "migrate: take lock", err)
	}
	defer func() {
		if _, uerr := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock); uerr != nil {
			// Closing the session releases its locks; the pool drops closed connections.
			err = errors.Join(err, wrap(ctx, "migrate: release lock", uerr), conn.Conn().Close(context.WithoutCancel(ctx)))
		}
	}()
	return applyMigrations(ctx, conn, migrations)
}

func applyMigrations(ctx context.Context, conn *pgxpool.Conn, migrations []storeutil.Migration) error {
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return wrap(ctx, "migrate: create schema_migrations", err)
	}
	rows, err := conn.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return wrap(ctx, "migrate: read schema_migrations", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return wrap(ctx, "migrate: read schema_migrations", err)
	}
	applied := map[int]bool{}
	for _, v := range versions {
		applied[int(v)] = true
	}
	for _, m := range migrations {
		if applied[m.Version] {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name)
			return err
		})
		if err != nil {
			return wrap(ctx, "migrate: "+m.Name, err)
		}
	}
	return nil
}
