package gateway

import (
	"errors"
	"net/http"
	"time"

	"github.com/pml-go/pml/internal/gateway/httpapi"
	"github.com/pml-go/pml/internal/store"
)

// KeyInfo is a key as its project's admins see it: never its secret.
type KeyInfo struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
}

// serveListKeys is GET /api/keys: the caller's project's keys (admin role,
// docs/auth.md).
func (s *Service) serveListKeys(w http.ResponseWriter, r *http.Request) {
	sc, _ := scopeFrom(r)
	keys, err := s.store.ListKeys(r.Context(), sc)
	if err != nil {
		s.log.Error("listing keys", "err", err)
		httpapi.Error(w, http.StatusServiceUnavailable, "store_unavailable", "the keys could not be read; retry shortly")
		return
	}
	out := []KeyInfo{}
	for _, k := range keys {
		out = append(out, KeyInfo{ID: k.ID, CreatedAt: k.CreatedAt})
	}
	httpapi.Write(w, http.StatusOK, map[string]any{"keys": out})
}

// serveCreateKey is POST /api/keys: a new key of the caller's project,
// whose secret this answer alone holds.
func (s *Service) serveCreateKey(w http.ResponseWriter, r *http.Request) {
	sc, _ := scopeFrom(r)
	key, err := CreateKey(r.Context(), s.store, sc)
	var k store.APIKey
	if err == nil {
		k, err = s.store.KeyByHash(r.Context(), HashKey(key))
	}
	if err != nil {
		s.log.Error("creating a key", "err", err)
		httpapi.Error(w, http.StatusServiceUnavailable, "store_unavailable", "the key could not be created; retry shortly")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpapi.Write(w, http.StatusCreated, map[string]any{"id": k.ID, "created_at": k.CreatedAt, "key": key})
}

// serveDeleteKey is DELETE /api/keys/{id}: the key stops working on this
// replica at once, on others within the key cache's lifetime.
func (s *Service) serveDeleteKey(w http.ResponseWriter, r *http.Request) {
	sc, _ := scopeFrom(r)
	err := s.store.DeleteKey(r.Context(), sc, r.PathValue("id"))
	switch {
	case errors.Is(err, store.ErrNotFound):
		httpapi.Error(w, http.StatusNotFound, "not_found", "this project has no key "+r.PathValue("id"))
	case err != nil:
		s.log.Error("deleting a key", "err", err)
		httpapi.Error(w, http.StatusServiceUnavailable, "store_unavailable", "the key could not be deleted; retry shortly")
	default:
		s.keys.Clear() // its hash is not known here: forget every cached key
		w.WriteHeader(http.StatusNoContent)
	}
}
