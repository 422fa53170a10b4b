package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/pgtest"
	"github.com/pml-go/pml/internal/store/postgres"
)

// BenchmarkDashboardMillionTraces reads the dashboard of a tenant holding
// 1,000,000 traces spread over the last week (with their rollups, as
// PutTraces writes them: per minute, latency bucket, error code and tool),
// beside another tenant's 100,000: each range costs a range scan of the
// rollups' keys, not of the traces (docs/dashboard.md).
func BenchmarkDashboardMillionTraces(b *testing.B) {
	dsn := pgtest.Start(b)
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	fill := []string{
		// 1,000,000 traces of acme/web over 7 days (one every 604 ms), 5% failed;
		// 100,000 of initech/x.
		`INSERT INTO traces (id, org, project, tools, success, started_at)
			SELECT 't' || i, 'acme', 'web', '["math:add","json:parse"]', i % 20 <> 0, now() - i * interval '604 ms'
			FROM generate_series(1, 1000000) i`,
		`INSERT INTO traces (id, org, project, tools, success, started_at)
			SELECT 'u' || i, 'initech', 'x', '[]', true, now() - i * interval '6040 ms'
			FROM generate_series(1, 100000) i`,
		`INSERT INTO dash_minutes (org, project, minute, executions, errors)
			SELECT org, project, date_trunc('minute', started_at), count(*), count(*) FILTER (WHERE NOT success)
			FROM traces GROUP BY 1, 2, 3`,
		`INSERT INTO dash_latency (org, project, minute, bucket, n)
			SELECT org, project, date_trunc('minute', started_at), abs(hashtext(id)) % 12, count(*)
			FROM traces GROUP BY 1, 2, 3, 4`,
		`INSERT INTO dash_errors (org, project, minute, code, n)
			SELECT org, project, date_trunc('minute', started_at), 'TOOL_ERROR', count(*)
			FROM traces WHERE NOT success GROUP BY 1, 2, 3`,
		`INSERT INTO dash_tools (org, project, minute, tool, calls, errors, total_ms, max_ms)
			SELECT org, project, date_trunc('minute', started_at), tool, count(*), count(*) FILTER (WHERE NOT success), count(*) * 0.4, 3
			FROM traces, unnest(ARRAY['math:add', 'json:parse', 'fs:read_file', 'git:status', 'shell:exec']) tool GROUP BY 1, 2, 3, 4`,
		`ANALYZE`,
	}
	start := time.Now()
	for _, q := range fill {
		if _, err := conn.Exec(ctx, q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	b.Logf("filled in %v", time.Since(start).Round(time.Millisecond))
	acme := store.Scope{Org: "acme", Project: "web"}
	for _, rg := range []struct {
		name  string
		scope store.Scope
		span  time.Duration
	}{{"1h", acme, time.Hour}, {"24h", acme, 24 * time.Hour}, {"7d", acme, 7 * 24 * time.Hour},
		{"7d-all-tenants", store.AllTenants, 7 * 24 * time.Hour}} {
		b.Run(rg.name, func(b *testing.B) {
			var rows store.DashboardRows
			for b.Loop() {
				if rows, err = s.Dashboard(ctx, rg.scope, time.Now().Add(-rg.span)); err != nil {
					b.Fatal(err)
				}
			}
			var n int64
			for _, m := range rows.Minutes {
				n += m.Executions
			}
			b.ReportMetric(float64(n), "executions")
		})
	}
}
