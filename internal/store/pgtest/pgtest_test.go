package pgtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func connect(t *testing.T, dsn string) (*pgx.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err == nil {
		t.Cleanup(func() { conn.Close(context.Background()) })
	}
	return conn, err
}

func TestStartGivesSeparateDatabasesInOneCluster(t *testing.T) {
	a, b := Start(t), Start(t)
	if a == b {
		t.Fatalf("two Start calls returned the same DSN %q", a)
	}
	ca, err := connect(t, a)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := connect(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Exec(t.Context(), "CREATE TABLE only_in_a (x int)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := cb.QueryRow(t.Context(), "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatal("a table created in one database is visible in the other")
	}
	var version string
	if err := ca.QueryRow(t.Context(), "SHOW server_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL %s, shared cluster port %d", version, shared.c.Port())
}

func TestClusterStopAndStart(t *testing.T) {
	c := StartCluster(t)
	if _, err := connect(t, c.DSN()); err != nil {
		t.Fatalf("fresh cluster: %v", err)
	}
	c.Stop(t)
	if _, err := connect(t, c.DSN()); err == nil {
		t.Fatal("connected to a stopped cluster")
	}
	c.Start(t)
	conn, err := connect(t, c.DSN())
	if err != nil {
		t.Fatalf("restarted cluster: %v", err)
	}
	if err := conn.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestMissingBinariesSkip(t *testing.T) {
	t.Setenv(binDirEnv, t.TempDir())
	t.Setenv(requireEnv, "")
	skipped := false
	t.Run("probe", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		binDir(t)
	})
	if !skipped {
		t.Fatal("missing binaries did not skip the test")
	}
}

func TestSweepRemovesDirectoriesOfDeadProcesses(t *testing.T) {
	// PID 2^22+1 is above Linux's pid_max limit, so it can never be alive.
	dead, err := os.MkdirTemp("", dirPrefix+"4194305-")
	if err != nil {
		t.Fatal(err)
	}
	alive, err := os.MkdirTemp("", dirPrefix+"1-") // init is always alive
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(alive); os.RemoveAll(dead) })
	sweepStale()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("directory of a dead process kept: %v", err)
	}
	if _, err := os.Stat(alive); err != nil {
		t.Errorf("directory of a live process removed: %v", err)
	}
}
