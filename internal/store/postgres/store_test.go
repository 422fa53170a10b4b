package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/pgtest"
	"github.com/pml-go/pml/internal/store/postgres"
	"github.com/pml-go/pml/internal/store/storetest"
)

func open(t *testing.T, dsn string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, pgtest.Start(t)) })
}

// Two replicas starting at once on a fresh database: both migrate without
// tripping over each other, and every migration is recorded once.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	dsn := pgtest.Start(t)
	const replicas = 4
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	for i := range replicas {
		wg.Go(func() {
			s, err := postgres.Open(t.Context(), dsn)
			if err == nil {
				err = s.CreateKey(t.Context(), store.APIKey{Hash: string(rune('a' + i)), Scope: store.Scope{Org: "o"}})
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var rows, distinct int
	if err := conn.QueryRow(t.Context(), `SELECT count(*), count(DISTINCT version) FROM schema_migrations`).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows == 0 || rows != distinct {
		t.Fatalf("schema_migrations has %d rows for %d versions", rows, distinct)
	}
}

// When the database goes away, calls fail fast with ErrUnavailable; when it
// comes back, the same Store works again without being reopened.
func TestOutageAndRecovery(t *testing.T) {
	t.Parallel()
	c := pgtest.StartCluster(t)
	s := open(t, c.DSN())
	ctx := t.Context()
	sc := store.Scope{Org: "o", Project: "p"}
	if err := s.CreateKey(ctx, store.APIKey{Hash: "before", Scope: sc}); err != nil {
		t.Fatal(err)
	}

	c.Stop(t)
	calls := map[string]func() error{
		"Ping":       func() error { return s.Ping(ctx) },
		"KeyByHash":  func() error { _, err := s.KeyByHash(ctx, "before"); return err },
		"CreateKey":  func() error { return s.CreateKey(ctx, store.APIKey{Hash: "during", Scope: sc}) },
		"PutTraces":  func() error { _, err := s.PutTraces(ctx, []store.Trace{{ID: "t", Scope: sc}}); return err },
		"ListTraces": func() error { _, _, err := s.ListTraces(ctx, store.TraceFilter{Scope: sc}); return err },
	}
	for name, call := range calls {
		start := time.Now()
		err := call()
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s with the database down: %v, want store.ErrUnavailable", name, err)
		}
		if d := time.Since(start); d > 4*time.Second {
			t.Errorf("%s took %v to fail", name, d)
		}
	}

	c.Start(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := s.KeyByHash(ctx, "before")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("store did not recover after the database came back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := s.CreateKey(ctx, store.APIKey{Hash: "after", Scope: sc}); err != nil {
		t.Fatalf("write after recovery: %v", err)
	}
}

// A server that accepts TCP but never answers must not hang Open: the
// connect timeout bounds it and the error says unavailable.
func TestOpenUnreachable(t *testing.T) {
	t.Parallel()
	for name, dsn := range map[string]string{
		"refused":            "postgres://postgres@127.0.0.1:1/x?sslmode=disable",
		"silent, dsn bound":  silentServer(t) + "&connect_timeout=1",
		"silent, default 3s": silentServer(t),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			s, err := postgres.Open(t.Context(), dsn)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, store.ErrUnavailable) {
				t.Errorf("Open: %v, want store.ErrUnavailable", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Open took %v to fail", d)
			}
		})
	}
}

func TestContextCancelIsNotUnavailable(t *testing.T) {
	s := open(t, pgtest.Start(t))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := s.Ping(ctx)
	if err == nil || errors.Is(err, store.ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Ping with a cancelled context: %v, want context.Canceled and not ErrUnavailable", err)
	}
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store {
		s, err := postgres.Open(b.Context(), pgtest.Start(b))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	})
}
