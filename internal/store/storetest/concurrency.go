package storetest

import (
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/pml-go/pml/internal/store"
)

// writers is how many goroutines write at once: enough to collide on every
// backend, SQLite's single writer included.
const writers = 32

func runConcurrency(t *testing.T, open func(t *testing.T) store.Store) {
	subtests(t, open, map[string]func(t *testing.T, s store.Store){
		"ParallelSavesDedupe": testParallelSavesDedupe,
		"ConcurrentWriters":   testConcurrentWriters,
	})
}

// parallel runs fn(i) for i in [0, n) at once and returns every error.
func parallel(n int, fn func(i int) error) []error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			if err := fn(i); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("writer %d: %w", i, err))
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	return errs
}

func testParallelSavesDedupe(t *testing.T, s store.Store) {
	var (
		mu     sync.Mutex
		ids    = map[string]bool{}
		counts []int
	)
	errs := parallel(writers, func(int) error {
		c, err := s.SaveCapability(t.Context(), capability(acmeWeb, "race", "save", "return 'same code'", ""))
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		ids[c.ID] = true
		counts = append(counts, int(c.UsageCount))
		return nil
	})
	for _, err := range errs {
		t.Error(err)
	}
	if len(ids) != 1 {
		t.Fatalf("%d parallel saves of one code produced %d capabilities", writers, len(ids))
	}
	// Every save counted exactly once: the returned counts are 1..writers.
	sort.Ints(counts)
	for i, n := range counts {
		if n != i+1 {
			t.Fatalf("usage counts returned = %v, want 1..%d each once", counts, writers)
		}
	}
	list, total := must2(s.ListCapabilities(t.Context(), store.CapabilityFilter{Viewer: acmeWeb})).of(t)
	if total != 1 || list[0].UsageCount != writers {
		t.Fatalf("stored: total %d, usage %d; want 1 and %d", total, list[0].UsageCount, writers)
	}
}

func testConcurrentWriters(t *testing.T, s store.Store) {
	errs := parallel(writers, func(i int) error {
		ctx := t.Context()
		id := fmt.Sprintf("w%02d", i)
		if err := s.CreateKey(ctx, store.APIKey{Hash: sha(id), Scope: acmeWeb}); err != nil {
			return err
		}
		if _, err := s.SaveCapability(ctx, capability(acmeWeb, "w", id, "return '"+id+"'", "")); err != nil {
			return err
		}
		if err := put(ctx, s, []store.Trace{trace(acmeWeb, id, 0), trace(acmeWeb, id+"-child", 0)}); err != nil {
			return err
		}
		if err := s.PutClientTools(ctx, acmeWeb, id, []store.ClientTool{{ID: "t:" + id}}); err != nil {
			return err
		}
		_, err := s.CapabilityByName(ctx, acmeWeb, "w", id)
		return err
	})
	for _, err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	if _, total := must2(s.ListCapabilities(t.Context(), store.CapabilityFilter{Viewer: acmeWeb})).of(t); total != writers {
		t.Errorf("%d capabilities, want %d", total, writers)
	}
	if _, total := must2(s.ListTraces(t.Context(), store.TraceFilter{Scope: acmeWeb})).of(t); total != 2*writers {
		t.Errorf("%d traces, want %d", total, 2*writers)
	}
	if tools := must(s.ClientTools(t.Context(), acmeWeb)).of(t); len(tools) != writers {
		t.Errorf("%d client tools, want %d", len(tools), writers)
	}
	for i := range writers {
		must(s.KeyByHash(t.Context(), sha(fmt.Sprintf("w%02d", i)))).of(t)
	}
}
