package traceapi

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/pml-go/pml/internal/store"
)

// fakePuts records the groups written; the first write blocks until
// release is closed, so the traces arriving meanwhile must queue.
type fakePuts struct {
	mu      sync.Mutex
	groups  [][]string
	release chan struct{}
	first   sync.Once
	entered chan struct{}
}

func (f *fakePuts) put(_ context.Context, rows []store.Trace) error {
	f.first.Do(func() { close(f.entered); <-f.release })
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
		if r.ID == "bad" {
			return errors.New("refused: bad")
		}
	}
	f.mu.Lock()
	f.groups = append(f.groups, ids)
	f.mu.Unlock()
	return nil
}

// Traces that end while a group is written share the next transaction, a
// trace the store refuses fails alone, and every run hears its own trace's
// outcome.
func TestGroupCommit(t *testing.T) {
	f := &fakePuts{release: make(chan struct{}), entered: make(chan struct{})}
	g := &groupCommit{put: f.put}
	ctx := context.Background()

	errs := make(map[string]error)
	var mu sync.Mutex
	var wg sync.WaitGroup
	keep := func(id string) {
		wg.Go(func() {
			err := g.store(ctx, store.Trace{ID: id})
			mu.Lock()
			errs[id] = err
			mu.Unlock()
		})
	}
	keep("lead")
	<-f.entered // the leader's transaction is under way
	const followers = 2*maxGroup + 10
	for i := range followers {
		keep("f" + strconv.Itoa(i))
	}
	keep("bad")
	// Every follower queues behind the blocked leader before it finishes.
	for {
		g.mu.Lock()
		n := len(g.queue)
		g.mu.Unlock()
		if n == followers+1 {
			break
		}
	}
	close(f.release)
	wg.Wait()

	if len(errs) != followers+2 {
		t.Fatalf("%d outcomes", len(errs))
	}
	for id, err := range errs {
		if (err != nil) != (id == "bad") {
			t.Errorf("%s: %v", id, err)
		}
	}
	stored := 0
	for i, grp := range f.groups {
		stored += len(grp)
		if len(grp) > maxGroup {
			t.Errorf("group %d holds %d traces, more than %d", i, len(grp), maxGroup)
		}
	}
	if stored != followers+1 {
		t.Errorf("%d traces stored, want %d", stored, followers+1)
	}
	// lead alone, then the queue maxGroup at a time: three groups, one of
	// which held bad and was written again trace by trace.
	full, singles := 0, 0
	for _, grp := range f.groups[1:] {
		switch len(grp) {
		case 1:
			singles++
		case maxGroup:
			full++
		}
	}
	if len(f.groups[0]) != 1 || full < 1 || len(f.groups)-1-singles > 2 || singles > maxGroup-1 {
		t.Errorf("groups of %v", groupSizes(f.groups))
	}
	if g.leading || len(g.queue) != 0 {
		t.Errorf("left leading=%v with %d queued", g.leading, len(g.queue))
	}
	// The next trace, with nothing under way, is written at once.
	if err := g.store(ctx, store.Trace{ID: "next"}); err != nil {
		t.Fatal(err)
	}
}

func groupSizes(groups [][]string) []int {
	out := make([]int, len(groups))
	for i, g := range groups {
		out[i] = len(g)
	}
	return out
}

// Runs that are ready to finish when a leader takes its group share its
// transaction: the leader yields before taking it. On one processor the
// stores started together all queue while the first to run leads, so they
// are not written one transaction each.
func TestGroupCommitLeaderTakesTheRunnable(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var (
		mu     sync.Mutex
		groups [][]string
	)
	g := &groupCommit{put: func(_ context.Context, rows []store.Trace) error {
		ids := make([]string, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
		}
		mu.Lock()
		groups = append(groups, ids)
		mu.Unlock()
		return nil
	}}
	const runs = 16
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			if err := g.store(context.Background(), store.Trace{ID: strconv.Itoa(i)}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	stored := 0
	for _, grp := range groups {
		stored += len(grp)
	}
	if stored != runs {
		t.Fatalf("%d traces stored, want %d", stored, runs)
	}
	if len(groups) > runs/2 {
		t.Errorf("%d runs ready together took %d transactions: groups of %v", runs, len(groups), groupSizes(groups))
	}
}
