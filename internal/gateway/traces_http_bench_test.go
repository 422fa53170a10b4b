package gateway_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/gateway/traceapi"
	"github.com/pml-go/pml/internal/tracing"
)

// BenchmarkTraceIngest100 posts full batches (100 fresh traces of 3 tasks)
// to POST /api/traces on SQLite over loopback: the package's sync rate.
func BenchmarkTraceIngest100(b *testing.B) {
	g := gatewaytest.Start(b, gateway.Options{})
	base := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		batch := make([]tracing.Trace, traceapi.MaxTracesPerRequest)
		for i := range batch {
			batch[i] = traceAt(base, time.Duration(i)*time.Millisecond, "wf", true, "filesystem:read_file", "json:parse", "crypto:sha256")
		}
		body, _ := json.Marshal(map[string]any{"traces": batch})
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/api/traces", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+g.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("post: %v %v", resp, err)
		}
		resp.Body.Close()
	}
}
