package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/store"
)

// Three tenants: two projects of one org, and another org.
var (
	acmeWeb = store.Scope{Org: "acme", Project: "web"}
	acmeAPI = store.Scope{Org: "acme", Project: "api"}
	globex  = store.Scope{Org: "globex", Project: "web"}
)

// subtests runs each case in parallel on its own fresh store.
func subtests(t *testing.T, open func(t *testing.T) store.Store, cases map[string]func(t *testing.T, s store.Store)) {
	t.Helper()
	for name, fn := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, open(t))
		})
	}
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// result carries a (value, error) pair to a test: must(f()).of(t) fails
// t on the error and returns the value.
type result[T any] struct {
	v   T
	err error
}

func must[T any](v T, err error) result[T] { return result[T]{v, err} }

func (r result[T]) of(t *testing.T) T {
	t.Helper()
	noErr(t, r.err)
	return r.v
}

// listResult is result for the (list, total, error) of the List methods.
type listResult[T any] struct {
	v     T
	total int
	err   error
}

func must2[T any](v T, total int, err error) listResult[T] { return listResult[T]{v, total, err} }

func (r listResult[T]) of(t *testing.T) (T, int) {
	t.Helper()
	noErr(t, r.err)
	return r.v, r.total
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

func wantNotFound(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("error = %v, want one wrapping store.ErrNotFound", err)
	}
}

// sameJSON compares JSON by value: PostgreSQL's jsonb does not keep the
// original spacing or key order.
func sameJSON(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	if len(want) == 0 {
		if len(got) != 0 {
			t.Fatalf("%s = %s, want absent", what, got)
		}
		return
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: stored JSON %q does not parse: %v", what, got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: want JSON %q does not parse: %v", what, want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Fatalf("%s = %s, want %s", what, got, want)
	}
}

// sameTime requires got to be t at microsecond precision, in UTC.
func sameTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if got.Location() != time.UTC {
		t.Errorf("%s location = %v, want UTC", what, got.Location())
	}
	if !got.Equal(want.Truncate(time.Microsecond)) {
		t.Errorf("%s = %v, want %v", what, got, want.Truncate(time.Microsecond))
	}
}

func sameStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s = %q, want %q", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s = %q, want %q", what, got, want)
		}
	}
}

// recent reports whether ts is a plausible "now" stamp from the store.
func recent(ts time.Time) bool {
	d := time.Since(ts)
	return d > -time.Minute && d < time.Minute
}

// put stores traces with PutTraces, for a test that does not ask which
// of them were new.
func put(ctx context.Context, s store.Store, traces []store.Trace) error {
	_, err := s.PutTraces(ctx, traces)
	return err
}
