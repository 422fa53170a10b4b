package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pml-go/pml/internal/store"
)

// wrap adds context to err, turns "no rows" into store.ErrNotFound and a
// lost or unreachable database into store.ErrUnavailable. An error caused by
// the caller's own context ending stays what it is.
func wrap(ctx context.Context, op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("postgres: %s: %w", op, store.ErrNotFound)
	case ctx.Err() == nil && unavailable(err):
		return fmt.Errorf("postgres: %s: %w: %w", op, store.ErrUnavailable, err)
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}

// unavailable reports whether err means the database cannot be reached or
// dropped the connection, as opposed to rejecting the request.
func unavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return unavailableState(pgErr.Code)
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) ||
		errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) ||
		errors.Is(err, pgconn.ErrConnClosed) ||
		pgconn.Timeout(err) ||
		pgconn.SafeToRetry(err)
}

// unavailableState reports whether a SQLSTATE says the server is going away,
// not up yet, or out of connections.
func unavailableState(code string) bool {
	switch code {
	case "57P01", // admin_shutdown
		"57P02", // crash_shutdown
		"57P03", // cannot_connect_now (starting up, shutting down, recovering)
		"53300": // too_many_connections
		return true
	}
	return strings.HasPrefix(code, "08") // connection_exception class
}
