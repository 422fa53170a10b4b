// Package sqlite is the embedded store backend: one SQLite file, opened with
// the pure-Go driver modernc.org/sqlite.
//
// SQLite allows one writer at a time. Rather than letting concurrent writers
// race for the file lock (and fail with SQLITE_BUSY), the store sends every
// write through a pool of exactly one connection, so writers queue in Go.
// Reads use a separate pool; in WAL mode they never wait for the writer.
// busy_timeout still covers other processes opening the same file (such as
// `pml gateway key create` next to a running gateway).
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// busyTimeoutMS is how long a connection waits for another process's lock.
const busyTimeoutMS = 5000

// writerPragmas size the writer's page cache and its WAL checkpoints for a
// gateway that stores a trace per run (docs/performance.md "The gateway's
// own CPU"). A trace dirties a page of each index keyed by a random id
// (the trace's, its workflow's) besides the pages it appends to, and
// retention deletes from the oldest pages: with SQLite's default 2 MiB
// cache the writer read those index pages back from the file over and
// over. A checkpoint copies each distinct page of the WAL into the
// database once and syncs both files: every 1,000 pages (the default, 4
// MiB) it copied the same index pages again and again, and its syncs
// came about four times a second under load; every 8,000 pages (32 MiB
// of WAL at most between checkpoints) each page is copied once for many
// more traces. Neither changes what a commit promises: WAL with
// synchronous NORMAL, as before.
const writerPragmas = "_pragma=cache_size(-8192)&_pragma=wal_autocheckpoint(8000)"

// Store implements store.Store on one SQLite database file.
type Store struct {
	w *sql.DB // writes: one connection
	r *sql.DB // reads: query-only connections (the same pool as w for ":memory:")

	// prepared are the writer's statements of the hot write path (a
	// trace and its rollups), parsed once rather than in every
	// transaction: parsing them was most of a lone trace's write.
	mu       sync.Mutex
	prepared map[string]*sql.Stmt

	// anySeen asks the readers whether a caller has discovers to take: a
	// run asks after every execution and almost always finds none
	// (TakeSeenDiscovers).
	anySeen *sql.Stmt
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed, with its parent directories) the database
// at path and applies pending migrations. path ":memory:" gives a private
// in-memory database, for tests.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == ":memory:" {
		return openMemory(ctx)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: resolve %q: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("sqlite: create directory of %q: %w", abs, err)
	}
	uri := "file:" + uriEscaper.Replace(abs)
	common := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)", busyTimeoutMS)

	// IMMEDIATE takes the write lock when a transaction begins, so a
	// transaction never fails half-way upgrading a read lock to a write lock.
	w, err := sql.Open("sqlite", uri+"?_txlock=immediate&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&"+writerPragmas+"&"+common)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %q: %w", abs, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	w.SetConnMaxLifetime(0)
	s := &Store{w: w}
	// The writer opens first: it switches the file to WAL and migrates it,
	// which the query-only readers could not do.
	if err := s.migrate(ctx); err != nil {
		return nil, errors.Join(err, w.Close())
	}
	if err := s.prepareWrites(ctx); err != nil {
		return nil, errors.Join(err, w.Close())
	}

	r, err := sql.Open("sqlite", uri+"?_pragma=query_only(1)&"+common)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("sqlite: open %q for reading: %w", abs, err), w.Close())
	}
	n := max(4, runtime.NumCPU())
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	s.r = r
	if err := s.Ping(ctx); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	if err := s.prepareReads(ctx); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

// uriEscaper escapes the characters that end or escape a path in a SQLite URI.
var uriEscaper = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// openMemory gives one connection used for both reads and writes: each
// connection to ":memory:" would otherwise be a different database.
func openMemory(ctx context.Context) (*Store, error) {
	db, err := sql.Open("sqlite", fmt.Sprintf(":memory:?_pragma=foreign_keys(1)&_pragma=busy_timeout(%d)", busyTimeoutMS))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open in-memory database: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	s := &Store{w: db, r: db}
	if err := s.migrate(ctx); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if err := s.prepareWrites(ctx); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if err := s.prepareReads(ctx); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

// prepareReads prepares the statements every run reads with.
func (s *Store) prepareReads(ctx context.Context) (err error) {
	s.anySeen, err = s.r.PrepareContext(ctx, anySeenSQL)
	if err != nil {
		return fmt.Errorf("sqlite: prepare: %w", err)
	}
	return nil
}

// prepareWrites prepares the hot write path's statements on the writer.
// It runs at Open: the writer has one connection, which a transaction
// holds, so nothing can be prepared on it from inside one.
func (s *Store) prepareWrites(ctx context.Context) error {
	s.prepared = map[string]*sql.Stmt{}
	for _, q := range append([]string{insertTrace, storeutil.HourToolsSQL}, storeutil.RollupSQL("max")...) {
		st, err := s.w.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("sqlite: prepare: %w", err)
		}
		s.prepared[q] = st
	}
	return nil
}

// txStmt is query for use in tx (which closes it): prepared at Open when it
// is one of the hot write path's, else now.
func (s *Store) txStmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	s.mu.Lock()
	st := s.prepared[query]
	s.mu.Unlock()
	if st == nil {
		return tx.PrepareContext(ctx, query)
	}
	return tx.StmtContext(ctx, st), nil
}

// Ping checks that both pools can reach the file.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.w.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping writer: %w", err)
	}
	if err := s.r.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping reader: %w", err)
	}
	return nil
}

// Close closes both pools.
func (s *Store) Close() error {
	var errs []error
	s.mu.Lock()
	for _, st := range s.prepared {
		errs = append(errs, st.Close())
	}
	s.prepared = nil
	s.mu.Unlock()
	if s.anySeen != nil {
		errs = append(errs, s.anySeen.Close())
	}
	if s.r != nil && s.r != s.w {
		errs = append(errs, s.r.Close())
	}
	errs = append(errs, s.w.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}
