package pmlerr_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
)

func TestMessage(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{pmlerr.New(pmlerr.InvalidRequest, "trace %d: bad", 3), "trace 3: bad"},
		{fmt.Errorf("ingest: %w", pmlerr.New(pmlerr.InvalidRequest, "bad")), "bad"},
		{pmlerr.Wrap(pmlerr.Internal, errors.New("disk full")), "disk full"},
		{&pmlerr.Error{Code: pmlerr.Internal, Err: errors.New("no message")}, string(pmlerr.Internal) + ": no message"},
		{errors.New("plain"), "plain"},
	} {
		if got := pmlerr.Message(tc.err); got != tc.want {
			t.Errorf("Message(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestBounded: a code outside the list becomes Unknown, so a metric label
// or a rollup key never takes a value a client made up.
func TestBounded(t *testing.T) {
	for _, c := range []pmlerr.Code{pmlerr.CodeError, pmlerr.Overloaded, pmlerr.Internal, pmlerr.Unknown} {
		if !c.Known() || c.Bounded() != c {
			t.Errorf("%s: Known %v, Bounded %s", c, c.Known(), c.Bounded())
		}
	}
	for _, c := range []pmlerr.Code{"", "code_error", "MADE_UP", pmlerr.Code(strings.Repeat("X", 250))} {
		if c.Known() || c.Bounded() != pmlerr.Unknown {
			t.Errorf("%q: Known %v, Bounded %s", c, c.Known(), c.Bounded())
		}
	}
}
