package httpapi_test

import (
	"testing"

	"github.com/pml-go/pml/internal/gateway/httpapi"
)

func TestPositiveParam(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		bad  bool
	}{
		{"", 7, false}, {"1", 1, false}, {"20", 20, false},
		{"0", 0, true}, {"-1", 0, true}, {"21", 0, true}, {"x", 0, true}, {"1.5", 0, true}, {"99999999999999999999", 0, true},
	} {
		got, err := httpapi.PositiveParam("limit", tc.in, 7, 20)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("PositiveParam(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.bad)
		}
		if tc.bad && err.Error() != `limit="`+tc.in+`": want an integer from 1 to 20` {
			t.Errorf("PositiveParam(%q) error %q does not name the parameter and range", tc.in, err)
		}
	}
}
