// Package telemetry exports PML execution traces as OpenTelemetry spans, over
// OTLP/HTTP, when and only when the standard OTEL_EXPORTER_OTLP_* variables
// ask for it. A PML trace is one OTel trace with the same 32-hex id: a root
// span for the run and one child span per mcp.* call, timed as recorded.
package telemetry

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Exporter turns finished PML traces into spans. A nil *Exporter is valid
// and does nothing, which is what an unconfigured environment gets.
type Exporter struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
}

// Enabled reports whether env (os.Getenv in production) asks for OTLP trace
// export: an OTLP endpoint is set, the SDK is not disabled and the traces
// exporter is not something other than otlp.
func Enabled(env func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(env("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	if v := strings.TrimSpace(env("OTEL_TRACES_EXPORTER")); v != "" && v != "otlp" {
		return false
	}
	return env("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// FromEnv returns an Exporter configured entirely by the OTEL_* environment
// (endpoint, headers, timeout, compression, sampler, resource attributes),
// or nil when Enabled is false. service is the default service.name;
// OTEL_SERVICE_NAME overrides it. Only the http/protobuf protocol is built
// in: asking for grpc is an error rather than a silent no-op.
func FromEnv(ctx context.Context, service string) (*Exporter, error) {
	if !Enabled(os.Getenv) {
		return nil, nil
	}
	proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto != "" && proto != "http/protobuf" {
		return nil, fmt.Errorf("telemetry: OTLP protocol %q is not supported; use http/protobuf", proto)
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
	}
	// Attributes first, then the environment, so OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES win over our default.
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(service)),
		resource.WithFromEnv(),
		resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithIDGenerator(fixedIDs{}))
	return &Exporter{tp: tp, tracer: tp.Tracer("github.com/pml-go/pml")}, nil
}

// Shutdown flushes the spans still buffered and stops the exporter.
func (e *Exporter) Shutdown(ctx context.Context) error {
	if e == nil {
		return nil
	}
	if err := e.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("telemetry: shutdown: %w", err)
	}
	return nil
}
