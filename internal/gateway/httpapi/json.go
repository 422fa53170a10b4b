// Package httpapi holds what the gateway's HTTP API endpoints share: the
// JSON answers (a value, or the {"error":code,"message":msg} shape of every
// refusal) and the reading of their query parameters. Shared by the gateway
// and its subpackages so their endpoints stay alike.
package httpapi

import (
	"net/http"

	"github.com/pml-go/pml/internal/wire"
)

// Write answers status with v as JSON.
func Write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	body, err := wire.Marshal(v)
	if err != nil {
		body, status = []byte(`{"error":"internal","message":"the answer could not be encoded"}`), http.StatusInternalServerError
	}
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// Error answers status with the API's error shape.
func Error(w http.ResponseWriter, status int, code, msg string) {
	Write(w, status, map[string]string{"error": code, "message": msg})
}
