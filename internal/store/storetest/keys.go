package storetest

import (
	"testing"
	"time"

	"github.com/pml-go/pml/internal/store"
)

func runKeys(t *testing.T, open func(t *testing.T) store.Store) {
	subtests(t, open, map[string]func(t *testing.T, s store.Store){
		"CreateAndLookup": func(t *testing.T, s store.Store) {
			created := time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.FixedZone("CET", 3600))
			k := store.APIKey{ID: "key-1", Hash: sha("secret"), Scope: acmeWeb, CreatedAt: created}
			noErr(t, s.CreateKey(t.Context(), k))
			got := must(s.KeyByHash(t.Context(), sha("secret"))).of(t)
			if got.ID != k.ID || got.Hash != k.Hash || got.Scope != k.Scope {
				t.Fatalf("KeyByHash = %+v, want %+v", got, k)
			}
			sameTime(t, "CreatedAt", got.CreatedAt, created)
		},
		"ListAndDeleteWithinScope": func(t *testing.T, s store.Store) {
			noErr(t, s.CreateKey(t.Context(), store.APIKey{ID: "k1", Hash: sha("k1"), Scope: acmeWeb}))
			noErr(t, s.CreateKey(t.Context(), store.APIKey{ID: "k2", Hash: sha("k2"), Scope: acmeWeb}))
			noErr(t, s.CreateKey(t.Context(), store.APIKey{ID: "g1", Hash: sha("g1"), Scope: globex}))
			keys := must(s.ListKeys(t.Context(), acmeWeb)).of(t)
			if len(keys) != 2 || keys[0].Scope != acmeWeb || keys[1].Scope != acmeWeb {
				t.Fatalf("ListKeys = %+v", keys)
			}
			wantNotFound(t, s.DeleteKey(t.Context(), acmeWeb, "g1")) // another scope's key
			if _, err := s.KeyByHash(t.Context(), sha("g1")); err != nil {
				t.Fatalf("another scope's key was deleted: %v", err)
			}
			noErr(t, s.DeleteKey(t.Context(), acmeWeb, "k1"))
			wantNotFound(t, s.DeleteKey(t.Context(), acmeWeb, "k1"))
			_, err := s.KeyByHash(t.Context(), sha("k1"))
			wantNotFound(t, err)
			if keys := must(s.ListKeys(t.Context(), acmeWeb)).of(t); len(keys) != 1 || keys[0].ID != "k2" {
				t.Fatalf("after delete: %+v", keys)
			}
		},
		"NotFound": func(t *testing.T, s store.Store) {
			noErr(t, s.CreateKey(t.Context(), store.APIKey{Hash: sha("a"), Scope: acmeWeb}))
			_, err := s.KeyByHash(t.Context(), sha("b"))
			wantNotFound(t, err)
		},
		"DefaultsFilled": func(t *testing.T, s store.Store) {
			noErr(t, s.CreateKey(t.Context(), store.APIKey{Hash: sha("x"), Scope: globex}))
			got := must(s.KeyByHash(t.Context(), sha("x"))).of(t)
			if got.ID == "" || !recent(got.CreatedAt) || got.Scope != globex {
				t.Fatalf("KeyByHash = %+v, want a generated ID, a current CreatedAt and scope %v", got, globex)
			}
		},
		"DuplicateHashRejected": func(t *testing.T, s store.Store) {
			noErr(t, s.CreateKey(t.Context(), store.APIKey{Hash: sha("dup"), Scope: acmeWeb}))
			if err := s.CreateKey(t.Context(), store.APIKey{Hash: sha("dup"), Scope: globex}); err == nil {
				t.Fatal("second key with the same hash was accepted")
			}
			if got := must(s.KeyByHash(t.Context(), sha("dup"))).of(t); got.Scope != acmeWeb {
				t.Fatalf("key scope = %v after a rejected duplicate, want %v", got.Scope, acmeWeb)
			}
		},
		"EmptyHashRejected": func(t *testing.T, s store.Store) {
			if err := s.CreateKey(t.Context(), store.APIKey{Scope: acmeWeb}); err == nil {
				t.Fatal("key with an empty hash was accepted")
			}
		},
		"Ping": func(t *testing.T, s store.Store) {
			noErr(t, s.Ping(t.Context()))
		},
	})
}
