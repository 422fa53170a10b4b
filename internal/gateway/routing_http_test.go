package gateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
)

// TestRoutingRevalidation: GET /api/v1/routing answers 304 only to an
// If-None-Match naming its ETag whole (or "*"); a tag merely containing it,
// or a garbled list, gets the rules again.
func TestRoutingRevalidation(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	first := get(t, g, g.Key, "/api/v1/routing")
	tag := first.header.Get("ETag")
	if first.status != http.StatusOK || tag == "" || len(first.body) == 0 {
		t.Fatalf("routing: HTTP %d %v", first.status, first.header)
	}
	bare := strings.Trim(tag, `"`)
	for inm, want := range map[string]int{
		tag:                            http.StatusNotModified,
		"W/" + tag:                     http.StatusNotModified,
		`"other", ` + tag:              http.StatusNotModified,
		"*":                            http.StatusNotModified,
		`"x` + tag + `"`:               http.StatusOK, // one garbled tag holding the ETag
		`"` + bare + `x"`:              http.StatusOK,
		`"x` + bare + `"`:              http.StatusOK,
		`"` + bare[:len(bare)-1] + `"`: http.StatusOK,
		bare:                           http.StatusOK, // unquoted
		`"other"`:                      http.StatusOK,
	} {
		r := get(t, g, g.Key, "/api/v1/routing", "If-None-Match", inm)
		if r.status != want || r.header.Get("ETag") != tag {
			t.Errorf("If-None-Match %s: HTTP %d, want %d", inm, r.status, want)
		}
		if want == http.StatusOK && string(r.body) != string(first.body) {
			t.Errorf("If-None-Match %s: body %q", inm, r.body)
		}
	}
}
