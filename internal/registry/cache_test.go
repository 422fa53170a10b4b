package registry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/store"
)

// Changes made through the registry are seen at once; changes another
// replica made in the store, within the cache TTL.
func TestLookupCache(t *testing.T) {
	st := openStore(t)
	const ttl = 100 * time.Millisecond
	r, err := New(Options{Store: st, Rules: routing.Default(), CacheTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	// The cache's clock moves only when the test says: the checks before
	// the TTL hold however slow the machine.
	clock := time.Now()
	r.now = func() time.Time { return clock }
	ctx := context.Background()
	if _, ok, _ := r.Resolve(ctx, acme, "cap:greet"); ok {
		t.Fatal("nothing saved yet")
	}
	saved, err := r.Save(ctx, store.Capability{Scope: acme, Namespace: "cap", Action: "greet", Code: "return 'hi'", Routing: "server"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := r.Resolve(ctx, acme, "cap:greet"); !ok {
		t.Fatal("a save here is seen at once (the miss was cached)")
	}
	saved.Action = "hello"
	if err := r.Update(ctx, saved); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := r.Resolve(ctx, acme, "cap:greet"); ok {
		t.Fatal("a rename here is seen at once")
	}
	n := mustParse(t, "acme.web.cap.hello")
	if _, err := r.Get(ctx, globex, n); !errors.Is(err, ErrNotFound) {
		t.Fatalf("private: %v", err)
	}
	// Another replica makes it public.
	saved.Visibility = store.VisibilityPublic
	if err := st.UpdateCapability(ctx, saved); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get(ctx, globex, n); !errors.Is(err, ErrNotFound) {
		t.Fatalf("before the TTL: %v", err)
	}
	clock = clock.Add(ttl + time.Millisecond)
	if _, err := r.Get(ctx, globex, n); err != nil {
		t.Fatalf("after the TTL: %v", err)
	}
}
