package gateway

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pml-go/pml/internal/admission"
)

// watchAdmission exports the admission controller's figures. They are
// totals over every tenant: a per-tenant label would show each scrape the
// names of all tenants.
func (m *Metrics) watchAdmission(c *admission.Controller) {
	gauge := func(name, help string, f func(admission.Stats) int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help},
			func() float64 { return float64(f(c.Stats())) })
	}
	m.Registry.MustRegister(
		gauge("pml_executions_admitted", "Executions admitted: running code or waiting on a tool.",
			func(s admission.Stats) int { return s.Admitted }),
		gauge("pml_executions_running", "Admitted executions whose code may run now (no call in flight).",
			func(s admission.Stats) int { return s.Running }),
		gauge("pml_executions_queued", "Requests waiting for an execution place.",
			func(s admission.Stats) int { return s.Queued }),
		gauge("pml_executions_waiting_to_run", "Admitted executions waiting for a running place.",
			func(s admission.Stats) int { return s.WaitingToRun }),
	)
	for _, reason := range admission.Reasons() {
		m.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "pml_executions_rejected_total",
			Help:        "Executions refused with OVERLOADED (HTTP 429 included), by reason: queue_full, wait, memory.",
			ConstLabels: prometheus.Labels{"reason": reason},
		}, func() float64 { return float64(c.Stats().Rejected[reason]) }))
	}
}
