package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/gateway/traceapi"
	"github.com/pml-go/pml/internal/httpserve"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/tokenauth"
	"github.com/pml-go/pml/internal/tracing"
)

// The floods of issue 29, posted by a project's own member through POST
// /api/traces, against what they cost the gateway and other tenants.

// floodEnv is a gateway with two tenants (acme/web, whose member floods,
// and initech/x) and an operator, all signed in with tokens.
type floodEnv struct {
	g                   *gatewaytest.Gateway
	flooder, other, ops string
}

func newFloodEnv(b *testing.B) floodEnv {
	b.Helper()
	p := testfixture.StartOIDCProvider(b)
	g := gatewaytest.StartAt(b, func(base string) gateway.Options {
		resource := base + "/mcp"
		for _, c := range []testfixture.OIDCClient{
			{ID: "flooder", Secret: "s1", Audience: resource, Claims: map[string]any{"groups": []string{"acme-web"}}},
			{ID: "other", Secret: "s2", Audience: resource, Claims: map[string]any{"groups": []string{"initech"}}},
			{ID: "ops", Secret: "s3", Audience: resource, Claims: map[string]any{"groups": []string{"sre"}}},
		} {
			p.AddClient(c)
		}
		// No ingest limits: the flood is stored whole, to measure what the
		// dashboard's bounds do alone.
		return gateway.Options{TraceIngest: &traceapi.IngestLimits{}, Config: gateway.FileConfig{OAuth: &tokenauth.Config{Resource: resource, Issuers: []tokenauth.Issuer{{
			Issuer: p.Issuer, RequiredScopes: []string{"pml"},
			Tenants: []tokenauth.TenantRule{
				{Claim: "groups", Value: "acme-web", Org: "acme", Project: "web", Role: tokenauth.RoleMember},
				{Claim: "groups", Value: "initech", Org: "initech", Project: "x", Role: tokenauth.RoleMember},
				{Claim: "groups", Value: "sre", Org: "*", Project: "*", Role: tokenauth.RoleAdmin},
			},
		}}}}}
	}, httpserve.Limits{})
	return floodEnv{g: g, flooder: p.Token(b, "flooder", "pml"), other: p.Token(b, "other", "pml"), ops: p.Token(b, "ops", "pml")}
}

// send posts one batch and returns the status.
func (e floodEnv) send(b *testing.B, token string, traces []tracing.Trace) int {
	b.Helper()
	body, err := json.Marshal(map[string]any{"traces": traces})
	if err != nil {
		b.Fatal(err)
	}
	resp, _ := gatewaytest.Do(b, http.MethodPost, e.g.URL+"/api/traces", token, bytes.NewReader(body), nil)
	return resp.StatusCode
}

// get answers one GET's status and size.
func (e floodEnv) get(ctx context.Context, path, token string) (int, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.g.URL+path, nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, int(n), err
}

// postClean posts a week of ordinary use for both tenants: a run every 10
// minutes, each calling three of eight tools.
func (e floodEnv) postClean(b *testing.B) {
	b.Helper()
	tools := []string{"math:add", "json:parse", "crypto:sha256", "fs:read", "fs:write", "git:status", "shell:exec", "http:get"}
	now := time.Now()
	for _, token := range []string{e.flooder, e.other} {
		var batch []tracing.Trace
		for i := range 7 * 24 * 6 {
			tr := traceAt(now, -time.Duration(i)*10*time.Minute-time.Minute, "clean", i%7 != 0,
				tools[i%8], tools[(i+3)%8], tools[(i+5)%8])
			batch = append(batch, tr)
			if len(batch) == 100 {
				if st := e.send(b, token, batch); st != http.StatusOK {
					b.Fatalf("clean batch: %d", st)
				}
				batch = nil
			}
		}
		if st := e.send(b, token, batch); st != http.StatusOK {
			b.Fatalf("clean batch: %d", st)
		}
	}
}

// postFlood posts issue 29's dashboard flood: 250 batches of 40 failed
// traces with 64 unique tool names each (640,000 tool rows) and a unique
// error code each.
func (e floodEnv) postFlood(b *testing.B) {
	b.Helper()
	now := time.Now()
	refused := 0
	for n := range 250 {
		batch := make([]tracing.Trace, 40)
		for i := range batch {
			tools := make([]string, 64)
			for k := range tools {
				tools[k] = fmt.Sprintf("flood:t%03d_%02d_%02d_%s", n, i, k, strings.Repeat("x", 40))
			}
			batch[i] = traceAt(now, -time.Duration(n*40+i)*time.Millisecond, "flood", false, tools...)
			batch[i].ErrorCode = fmt.Sprintf("FLOOD_%06d", n*40+i)
		}
		if st := e.send(b, e.flooder, batch); st != http.StatusOK {
			refused++
		}
	}
	b.ReportMetric(float64(refused), "flood-batches-refused")
}

// BenchmarkDashboardFlood: the operator's week and another tenant's trace
// list, on a week of ordinary use (clean) and after one member's flood of
// 640,000 tool rows. "other-quiet" lists the other tenant's traces alone,
// "other-during" while four people of the flooding tenant each reload its
// week's dashboard every quarter second (more often than anyone does; a
// dashboard that takes longer than that is reloaded as soon as it answers).
func BenchmarkDashboardFlood(b *testing.B) {
	for _, flood := range []bool{false, true} {
		name := "clean"
		if flood {
			name = "flood"
		}
		b.Run(name, func(b *testing.B) {
			e := newFloodEnv(b)
			e.postClean(b)
			if flood {
				start := time.Now()
				e.postFlood(b)
				b.Logf("flood posted in %v", time.Since(start))
			}
			runtime.GC()
			b.Run("operator-week", func(b *testing.B) {
				size := 0
				for b.Loop() {
					st, n, err := e.get(b.Context(), "/api/dashboard?range=7d", e.ops)
					if err != nil || st != http.StatusOK {
						b.Fatalf("dashboard: %d %v", st, err)
					}
					size = n
				}
				b.ReportMetric(float64(size), "bytes")
			})
			b.Run("tenant-week", func(b *testing.B) {
				for b.Loop() {
					if st, _, err := e.get(b.Context(), "/api/dashboard?range=7d", e.flooder); err != nil || st != http.StatusOK {
						b.Fatalf("dashboard: %d %v", st, err)
					}
				}
			})
			list := func(b *testing.B) {
				var took []time.Duration
				for b.Loop() {
					start := time.Now()
					if st, _, err := e.get(b.Context(), "/api/traces?limit=50", e.other); err != nil || st != http.StatusOK {
						b.Fatalf("list: %d %v", st, err)
					}
					took = append(took, time.Since(start))
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2])/float64(time.Millisecond), "p50-ms")
				b.ReportMetric(float64(took[len(took)*95/100])/float64(time.Millisecond), "p95-ms")
			}
			b.Run("other-quiet", list)
			b.Run("other-during", func(b *testing.B) {
				ctx, cancel := context.WithCancel(b.Context())
				var wg sync.WaitGroup
				for range 4 {
					wg.Go(func() {
						for ctx.Err() == nil {
							_, _, _ = e.get(ctx, "/api/dashboard?range=7d", e.flooder)
							select {
							case <-ctx.Done():
							case <-time.After(250 * time.Millisecond):
							}
						}
					})
				}
				list(b)
				cancel()
				wg.Wait()
			})
		})
	}
}

// BenchmarkErrorCodeFlood: issue 29's metric flood, 600 batches of 100
// failed local runs with a unique 250-byte error code each; it reports the
// pml_errors_total series, the size of /metrics and the process's memory
// after it.
func BenchmarkErrorCodeFlood(b *testing.B) {
	for b.Loop() {
		// No ingest limits: the flood is stored whole, to measure what the
		// bounded error codes do alone.
		g := gatewaytest.Start(b, gateway.Options{TraceIngest: &traceapi.IngestLimits{}})
		e := floodEnv{g: g}
		now := time.Now()
		for n := range 600 {
			batch := make([]tracing.Trace, 100)
			for i := range batch {
				tr := traceAt(now, -time.Duration(n*100+i)*time.Millisecond, "", false, "math:add")
				s := fmt.Sprintf("FLOOD_%08d_", n*100+i)
				tr.ErrorCode = s + strings.Repeat("X", 250-len(s))
				batch[i] = tr
			}
			if st := e.send(b, g.Key, batch); st != http.StatusOK {
				b.Fatalf("batch %d: %d", n, st)
			}
		}
		resp, err := http.Get(g.MetricsURL + "/metrics")
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		series := strings.Count(string(body), "\npml_errors_total{")
		runtime.GC()
		b.ReportMetric(float64(series), "series")
		b.ReportMetric(float64(len(body)), "metrics-bytes")
		reportMemory(b)
		if st, _, err := e.get(b.Context(), "/api/traces?limit=1", g.Key); err != nil || st != http.StatusOK {
			b.Fatalf("the next request: %d %v", st, err)
		}
	}
}
