// Package pgtest starts throwaway PostgreSQL clusters for tests, from the
// server binaries installed on the machine (PostgreSQL 15 by default).
//
// Start gives each test a fresh database in one cluster shared by the whole
// test binary (initdb is the slow part; a database costs milliseconds).
// StartCluster gives a test its own cluster, which it may stop and restart.
//
// The postmaster runs as a direct child of the test binary with a parent-death
// signal, so a cluster never outlives the test process, even when that process
// is killed. When running as root, initdb and postgres run as the "postgres"
// OS user (PostgreSQL refuses to run as root), by switching credentials in the
// child rather than through su.
//
// When the binaries are missing the test is skipped, unless the environment
// sets PML_REQUIRE_POSTGRES=1 (as CI does): then it fails.
package pgtest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

const (
	defaultBinDir = "/usr/lib/postgresql/15/bin"
	binDirEnv     = "PML_PG_BIN"
	requireEnv    = "PML_REQUIRE_POSTGRES"
)

// shared is the per-binary cluster behind Start. It is process-wide state on
// purpose: sharing one cluster across tests is what keeps suites fast. Its
// postmaster dies with the process; sweepStale removes its directory on a
// later run.
var shared struct {
	once sync.Once
	c    *Cluster
	err  error
}

// Start returns the DSN of a new, empty database in the test binary's shared
// cluster, dropped when t ends.
func Start(t testing.TB) string {
	t.Helper()
	bin := binDir(t)
	shared.once.Do(func() {
		shared.c, shared.err = newCluster(bin)
	})
	if shared.err != nil {
		t.Fatalf("pgtest: start shared cluster: %v", shared.err)
	}
	return shared.c.NewDatabase(t)
}

// StartCluster starts a cluster of t's own, with one empty database (DSN), and
// stops and deletes it when t ends.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	c, err := newCluster(binDir(t))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := c.destroy(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	c.dsn = c.NewDatabase(t)
	return c
}

// binDir finds initdb and postgres, or skips (or fails) t.
func binDir(t testing.TB) string {
	t.Helper()
	if !supported {
		msg := "pgtest: PostgreSQL clusters run on Linux only (the postmaster's parent-death signal)"
		if os.Getenv(requireEnv) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := os.Getenv(binDirEnv)
	if dir == "" {
		dir = defaultBinDir
	}
	for _, name := range []string{"initdb", "postgres"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			msg := fmt.Sprintf("pgtest: PostgreSQL server binaries not found in %s (set %s): %v", dir, binDirEnv, err)
			if os.Getenv(requireEnv) == "1" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return dir
}
