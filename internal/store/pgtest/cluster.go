package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	readyTimeout = 30 * time.Second
	stopTimeout  = 30 * time.Second
)

// Cluster is one running (or stopped) throwaway PostgreSQL cluster.
type Cluster struct {
	bin  string
	dir  string // owns everything: data directory and server log
	port int
	dsn  string
	cred *credential // nil unless running as root

	mu     sync.Mutex
	server *server // nil while stopped
}

func newCluster(bin string) (*Cluster, error) {
	sweepStale()
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", dirPrefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("create cluster directory: %w", err)
	}
	c := &Cluster{bin: bin, dir: dir, cred: cred}
	if err := c.init(); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	// The port is free when chosen but may be taken before postgres binds it
	// (other tests run beside us); a few fresh ports make that harmless.
	for attempt := 0; ; attempt++ {
		if c.port, err = freePort(); err != nil {
			break
		}
		if err = c.start(); err == nil || attempt == 2 {
			break
		}
	}
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	return c, nil
}

func (c *Cluster) init() error {
	if c.cred != nil {
		if err := chown(c.dir, c.cred); err != nil {
			return fmt.Errorf("chown %s to the postgres user: %w", c.dir, err)
		}
	}
	out, err := c.command("initdb", "-D", c.dataDir(), "-U", "postgres", "--auth=trust",
		"--no-sync", "--encoding=UTF8", "--locale=C", "--no-instructions").CombinedOutput()
	if err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	return nil
}

func (c *Cluster) dataDir() string { return filepath.Join(c.dir, "data") }
func (c *Cluster) logPath() string { return filepath.Join(c.dir, "postgres.log") }

// DSN is the connection string of the cluster's own database (StartCluster).
func (c *Cluster) DSN() string { return c.dsn }

// Port is the loopback TCP port the cluster listens on.
func (c *Cluster) Port() int { return c.port }

// Stop shuts the cluster down (fast shutdown: sessions are disconnected).
func (c *Cluster) Stop(t testing.TB) {
	t.Helper()
	if err := c.stop(); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
}

// Start starts a stopped cluster again, on the same port.
func (c *Cluster) Start(t testing.TB) {
	t.Helper()
	if err := c.start(); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
}

// NewDatabase creates an empty database, dropped when t ends, and returns its DSN.
func (c *Cluster) NewDatabase(t testing.TB) string {
	t.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := "t_" + hex.EncodeToString(b[:])
	if err := c.admin(t.Context(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		if !c.running() {
			return // a stopped cluster is destroyed whole
		}
		// FORCE: a store the test forgot to close must not keep the database.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.admin(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return c.dbDSN(name)
}

func (c *Cluster) dbDSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// admin runs one statement in the maintenance database.
func (c *Cluster) admin(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, c.dbDSN("postgres"))
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

func (c *Cluster) running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.server != nil
}

func (c *Cluster) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.server != nil {
		return errors.New("cluster already running")
	}
	s, err := c.launch()
	if err != nil {
		return err
	}
	if err := c.waitReady(s); err != nil {
		return errors.Join(err, s.stop(stopTimeout))
	}
	c.server = s
	return nil
}

func (c *Cluster) stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.server == nil {
		return nil
	}
	err := c.server.stop(stopTimeout)
	c.server = nil
	return err
}

// destroy stops the cluster and deletes its directory.
func (c *Cluster) destroy() error {
	return errors.Join(c.stop(), os.RemoveAll(c.dir))
}

// waitReady polls until the server accepts connections, or fails as soon as
// it exits (a port taken, a bad setting), with the server log as the reason.
func (c *Cluster) waitReady(s *server) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, c.dbDSN("postgres"))
		if err == nil {
			err = conn.Close(ctx)
			cancel()
			return err
		}
		cancel()
		select {
		case <-s.exited:
			return fmt.Errorf("postgres exited during startup: %v\n%s", s.err, c.logTail())
		case <-time.After(25 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready after %v: %w\n%s", readyTimeout, err, c.logTail())
		}
	}
}

func (c *Cluster) logTail() string {
	b, err := os.ReadFile(c.logPath())
	if err != nil {
		return "(no server log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
