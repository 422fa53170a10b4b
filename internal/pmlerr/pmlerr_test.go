package pmlerr_test

import (
	"errors"
	"fmt"
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
