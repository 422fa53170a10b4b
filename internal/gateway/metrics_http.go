package gateway

import "net/http"

// MetricsHandler serves GET /metrics for the operator. The series count
// every tenant's executions together, so they are served on a listener of
// their own (`pml gateway --metrics-addr`, loopback by default), never on
// Handler, which any key holder and anyone on the network can reach.
func (s *Service) MetricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metrics.Handler())
	return mux
}
