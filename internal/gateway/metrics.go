package gateway

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pml-go/pml/internal/buildinfo"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
)

// Metrics are the gateway's Prometheus series, on a registry of their own so
// two services in one process (tests, local mode) never collide.
type Metrics struct {
	Registry       *prometheus.Registry
	Executions     *prometheus.CounterVec   // side, status
	Duration       *prometheus.HistogramVec // side
	Errors         *prometheus.CounterVec   // code
	SandboxMemory  prometheus.Histogram
	UpstreamStarts *prometheus.CounterVec // server, kind=start|restart
	TraceQueue     prometheus.Gauge
	TracesDropped  prometheus.Counter
	TracesPruned   prometheus.Counter
	// KeyRefetchRefused counts tokens whose unknown key id did not make
	// the gateway fetch their issuer's keys again (docs/auth.md).
	KeyRefetchRefused prometheus.Counter
}

// NewMetrics registers every series on a new registry.
func NewMetrics() *Metrics {
	r := prometheus.NewRegistry()
	m := &Metrics{
		Registry: r,
		Executions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pml_executions_total", Help: "Executions by side (server, local, delegated) and status.",
		}, []string{"side", "status"}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "pml_execution_duration_seconds", Help: "Execution wall time by side.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"side"}),
		Errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pml_errors_total", Help: "Error answers by error code (UNKNOWN: a posted trace's code outside the wire contract's).",
		}, []string{"code"}),
		SandboxMemory: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "pml_sandbox_memory_bytes", Help: "JS engine memory in use at the end of an execution.",
			Buckets: prometheus.ExponentialBuckets(64<<10, 2, 12),
		}),
		UpstreamStarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pml_upstream_server_starts_total", Help: "Upstream MCP server starts and restarts.",
		}, []string{"server", "kind"}),
		TraceQueue: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pml_trace_queue_depth", Help: "Traces waiting to be synced.",
		}),
		TracesDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pml_traces_dropped_total", Help: "Traces dropped because the queue was full.",
		}),
		TracesPruned: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pml_traces_pruned_total", Help: "Traces deleted by the retention policy.",
		}),
		KeyRefetchRefused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pml_oauth_key_refetch_refused_total",
			Help: "Tokens naming a key id their issuer's keys lack, refused without fetching the keys again (at most once a minute per issuer).",
		}),
	}
	build := buildinfo.Read()
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "pml_build_info", Help: "The running build (always 1): version, commit, build date, Go and engine versions.",
		ConstLabels: prometheus.Labels{"version": build.Version, "commit": build.Commit, "build_date": build.BuildDate,
			"go_version": build.GoVersion, "engine": build.Engine},
	})
	buildInfo.Set(1)
	r.MustRegister(m.Executions, m.Duration, m.Errors, m.SandboxMemory, m.UpstreamStarts, m.TraceQueue, m.TracesDropped, m.TracesPruned, m.KeyRefetchRefused,
		buildInfo, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// UpstreamStarted is the upstream pool's OnStart hook. The server label is
// a name from the gateway's configuration, a set fixed at start.
func (m *Metrics) UpstreamStarted(server string, restart bool) {
	kind := "start"
	if restart {
		kind = "restart"
	}
	m.UpstreamStarts.WithLabelValues(server, kind).Inc()
}

// observe counts one execution. Every label comes from a fixed set: side is
// the caller's constant, status a wire.Status, and code is bounded to the
// known codes (pmlerr.Code.Bounded), so a posted trace's made-up code adds
// no series.
func (m *Metrics) observe(side string, status wire.Status, code pmlerr.Code, d time.Duration, memory int64) {
	m.Executions.WithLabelValues(side, string(status)).Inc()
	m.Duration.WithLabelValues(side).Observe(d.Seconds())
	if code != "" {
		m.Errors.WithLabelValues(string(code.Bounded())).Inc()
	}
	if memory > 0 {
		m.SandboxMemory.Observe(float64(memory))
	}
}
