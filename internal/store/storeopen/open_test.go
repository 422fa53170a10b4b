package storeopen_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/pgtest"
	"github.com/pml-go/pml/internal/store/postgres"
	"github.com/pml-go/pml/internal/store/sqlite"
	"github.com/pml-go/pml/internal/store/storeopen"
)

func TestOpenPicksSQLiteForPaths(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "pml.db")
	s, err := storeopen.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.(*sqlite.Store); !ok {
		t.Fatalf("Open(%q) = %T, want *sqlite.Store", path, s)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no database file at %s: %v", path, err)
	}
}

func TestOpenPicksPostgresForURLs(t *testing.T) {
	dsn := pgtest.Start(t)
	for _, d := range []string{dsn, strings.Replace(dsn, "postgres://", "postgresql://", 1)} {
		s, err := storeopen.Open(t.Context(), d)
		if err != nil {
			t.Fatalf("Open(%q): %v", d, err)
		}
		if _, ok := s.(*postgres.Store); !ok {
			t.Errorf("Open(%q) = %T, want *postgres.Store", d, s)
		}
		if err := s.Ping(t.Context()); err != nil {
			t.Error(err)
		}
		s.Close()
	}
}

// A postgres URL whose server is down fails as unavailable instead of being
// mistaken for a file name.
func TestOpenPostgresURLDown(t *testing.T) {
	_, err := storeopen.Open(t.Context(), "postgres://postgres@127.0.0.1:1/x?sslmode=disable")
	if err == nil {
		t.Fatal("Open succeeded against a closed port")
	}
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Open: %v, want store.ErrUnavailable", err)
	}
}
