package sqlite

import (
	"context"
	"embed"
	"fmt"

	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrate applies pending migrations in one IMMEDIATE transaction: a second
// process opening the same file at the same time waits (busy_timeout) and
// then finds them applied.
func (s *Store) migrate(ctx context.Context) (err error) {
	migrations, err := storeutil.LoadMigrations(migrationFS, "migrations")
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: begin migrations: %w", err)
	}
	defer rollbackUnlessCommitted(tx, &err)

	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL
	)`); err != nil {
		return fmt.Errorf("sqlite: create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := tx.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("sqlite: read schema_migrations: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return fmt.Errorf("sqlite: read schema_migrations: %w", err)
		}
		applied[v] = true
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("sqlite: read schema_migrations: %w", err)
	}

	for _, m := range migrations {
		if applied[m.Version] {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
			m.Version, m.Name, formatTime(storeutil.Now())); err != nil {
			return fmt.Errorf("sqlite: record migration %s: %w", m.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit migrations: %w", err)
	}
	return nil
}
