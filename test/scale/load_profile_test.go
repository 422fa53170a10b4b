//go:build linux && loadtest

package scale_test

import (
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/store/pgtest"
)

// TestLoadProfile is the load test against one gateway running in this
// process on PostgreSQL, so that a CPU profile sees the gateway (there is no
// pprof endpoint in `pml gateway`):
//
//	go test -c -tags loadtest -o /tmp/scale.test ./test/scale/
//	(cd test/scale && /tmp/scale.test -test.run '^TestLoadProfile$' -test.v -test.cpuprofile /tmp/cpu.out)
//	go tool pprof -top /tmp/scale.test /tmp/cpu.out
//
// The profile also holds the MCP clients, which run in the same process.
func TestLoadProfile(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{DB: pgtest.Start(t)})
	r := runLoad(t, loadConfigFromEnv(t), g.URL, g.Key, nil, 0)
	t.Log(r.report())
	if r.errors > 0 {
		t.Errorf("%d requests failed; first: %v", r.errors, r.firstErr)
	}
}
