package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/sqlite"
	"github.com/pml-go/pml/internal/store/storetest"
)

func openFile(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openFile(t, filepath.Join(t.TempDir(), "pml.db"))
	})
}

func TestSuiteInMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openFile(t, ":memory:") })
}

func TestOpenCreatesParentDirectories(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "c", "pml.db")
	openFile(t, path)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not created: %v", err)
	}
}

// A path with the characters that are special in SQLite URIs still names
// that exact file.
func TestOpenOddPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "50% off?#x")
	path := filepath.Join(dir, "pml.db")
	openFile(t, path)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at %q: %v", path, err)
	}
}

func TestReopenKeepsDataAndMigratesOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pml.db")
	ctx := t.Context()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateKey(ctx, store.APIKey{Hash: "h", Scope: store.Scope{Org: "o", Project: "p"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openFile(t, path)
	if _, err := s2.KeyByHash(ctx, "h"); err != nil {
		t.Fatalf("key lost on reopen: %v", err)
	}
}

// Several processes (here: stores) opening one file at once, a fresh one,
// all migrate it safely and then write side by side without SQLITE_BUSY.
func TestSeveralStoresOnOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	const n = 4
	stores := make([]*sqlite.Store, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			s, err := sqlite.Open(t.Context(), path)
			stores[i], errs[i] = s, err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Open %d: %v", i, err)
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	sc := store.Scope{Org: "o", Project: "p"}
	for i := range 32 {
		wg.Go(func() {
			s := stores[i%n]
			tr := store.Trace{ID: fmt.Sprintf("t%d", i), Scope: sc}
			if _, err := s.PutTraces(context.WithoutCancel(t.Context()), []store.Trace{tr}); err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if _, total, err := stores[0].ListTraces(t.Context(), store.TraceFilter{Scope: sc}); err != nil || total != 32 {
		t.Fatalf("ListTraces: total %d, err %v; want 32", total, err)
	}
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store {
		s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "pml.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	})
}

// A file another process keeps locked is not waited on forever: Open gives
// up with SQLite's "database is locked" once busy_timeout has passed (the
// wait is inside SQLite, so a context ending sooner does not cut it short),
// and opens the file once the lock is gone.
func TestOpenGivesUpOnALockedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locked.db")
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	if s, err := sqlite.Open(t.Context(), path); err == nil {
		s.Close()
		t.Fatal("Open of a locked file succeeded")
	} else if !strings.Contains(err.Error(), "database is locked") {
		t.Fatalf("Open of a locked file: %v, want database is locked", err)
	}
	if _, err := conn.ExecContext(t.Context(), "COMMIT"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	s := openFile(t, path)
	if err := s.CreateKey(t.Context(), store.APIKey{Hash: "h", Scope: store.Scope{Org: "o", Project: "p"}}); err != nil {
		t.Fatalf("the store after the lock went: %v", err)
	}
}
