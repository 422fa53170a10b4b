package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

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
	tx, err := s.beginMigrations(ctx)
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

// beginMigrations takes the write lock to migrate. Processes opening a fresh
// file at once each switch it to WAL, which needs the file to themselves:
// when two hold a read lock and both want it, SQLite refuses one at once
// instead of letting busy_timeout wait on a deadlock. The refused one has
// let go of its lock by then, so it tries again until busy_timeout's time
// has passed.
func (s *Store) beginMigrations(ctx context.Context) (*sql.Tx, error) {
	deadline := time.Now().Add(busyTimeoutMS * time.Millisecond)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		tx, err := s.w.BeginTx(ctx, nil)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return tx, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

// isBusy reports whether err is SQLite's "database is locked", in any of its
// extended forms.
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}
