package storetest

import (
	"fmt"
	"testing"

	"github.com/pml-go/pml/internal/store"
)

// Bench measures the calls on a gateway's request path: key lookup (every
// request), capability lookup by name, trace ingest (a batch of 10) and a
// deduplicated capability save. open gives a fresh store.
func Bench(b *testing.B, open func(b *testing.B) store.Store) {
	b.Run("KeyByHash", func(b *testing.B) {
		s := open(b)
		if err := s.CreateKey(b.Context(), store.APIKey{Hash: sha("k"), Scope: acmeWeb}); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.KeyByHash(b.Context(), sha("k")); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("CapabilityByName", func(b *testing.B) {
		s := open(b)
		for i := range 50 {
			c := capability(acmeWeb, "ns", fmt.Sprintf("a%d", i), fmt.Sprintf("return %d", i), store.VisibilityPublic)
			if _, err := s.SaveCapability(b.Context(), c); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.CapabilityByName(b.Context(), acmeAPI, "ns", "a7"); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("PutTraces10", func(b *testing.B) {
		s := open(b)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			batch := make([]store.Trace, 10)
			for j := range batch {
				batch[j] = trace(acmeWeb, fmt.Sprintf("b%d-%d", i, j), 0)
			}
			i++
			if err := put(b.Context(), s, batch); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("SaveCapabilityDedupe", func(b *testing.B) {
		s := open(b)
		c := capability(acmeWeb, "ns", "same", "return 'same'", "")
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.SaveCapability(b.Context(), c); err != nil {
				b.Fatal(err)
			}
		}
	})
}
