// Package postgres is the store backend for running several gateway replicas
// against one PostgreSQL database, through a pgx connection pool.
//
// When the database goes away, calls fail fast with an error wrapping
// store.ErrUnavailable (connection attempts are bounded by connectTimeout),
// and the pool recovers by itself when the database is back: broken
// connections are discarded and new ones dialled on demand.
package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pml-go/pml/internal/store"
)

// connectTimeout bounds one connection attempt (dial, TLS, startup) unless
// the DSN sets connect_timeout itself.
const connectTimeout = 3 * time.Second

// defaultMaxConns replaces pgxpool's default (max(4, CPUs)), too few for a
// gateway where every request authenticates and writes traces. A DSN's
// pool_max_conns wins.
const defaultMaxConns = 16

// Store implements store.Store on PostgreSQL.
type Store struct {
	pool *pgxpool.Pool
}

var _ store.Store = (*Store)(nil)

// Open connects to dsn (a postgres:// URL or key=value string; pool_max_conns
// and the other pgxpool settings are honoured) and applies pending
// migrations. Several replicas may Open the same database at once.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse dsn: %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = connectTimeout
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = defaultMaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: create pool: %w", err)
	}
	s := &Store{pool: pool}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	return wrap(ctx, "ping", s.pool.Ping(ctx))
}

// Close closes every connection; calls in flight finish first.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}
