// Package storeutil holds what the SQLite and PostgreSQL backends share:
// ID generation, input normalisation and validation, the migration loader.
// It keeps both backends behaving identically where SQL does not decide.
package storeutil

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// NewID returns a random 128-bit identifier as 32 hex characters.
func NewID() string {
	var b [16]byte
	// crypto/rand.Read never returns an error (it panics if the OS source fails).
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Now is the store's clock: UTC at microsecond precision, the finest
// PostgreSQL keeps, so both backends return identical timestamps.
func Now() time.Time {
	return Time(time.Now())
}

// Time normalises t the way Now does.
func Time(t time.Time) time.Time {
	return t.UTC().Truncate(time.Microsecond)
}
