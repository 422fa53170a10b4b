package sqlite

import (
	"context"
	"path/filepath"
	"testing"
)

// The writer runs with the page cache and checkpoint interval of
// writerPragmas, in WAL with synchronous NORMAL: the commit's promise is
// unchanged.
func TestWriterPragmas(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	for pragma, want := range map[string]string{
		"cache_size":         "-8192",
		"wal_autocheckpoint": "8000",
		"journal_mode":       "wal",
		"synchronous":        "1", // NORMAL
	} {
		var got string
		if err := s.w.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", pragma, err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %s, want %s", pragma, got, want)
		}
	}
}
