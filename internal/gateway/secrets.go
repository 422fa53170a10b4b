package gateway

import "github.com/pml-go/pml/internal/tracing"

// holdsSecret reports whether any of texts (a capability's code, its
// intent) holds a literal secret by the trace sanitizer's secret rules. Such
// code is not learned, and a capability stored before that rule is never
// served (README "Tenants and names").
func holdsSecret(texts ...string) bool {
	san := tracing.NewSanitizer(nil)
	for _, t := range texts {
		if san.HasSecret(t) {
			return true
		}
	}
	return false
}
