package approval

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
)

// fakeClock is a manually advanced clock for TTL tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newClock() *fakeClock { return &fakeClock{t: time.Date(2026, 1, 11, 9, 0, 0, 0, time.UTC)} }

func wantNotFound(t *testing.T, err error) {
	t.Helper()
	if code := pmlerr.CodeOf(err, ""); code != pmlerr.WorkflowNotFound {
		t.Fatalf("err = %v, want code %s", err, pmlerr.WorkflowNotFound)
	}
}

func TestStoreCreateTake(t *testing.T) {
	clock := newClock()
	s := NewStore[string](0, clock.now)
	j := NewJournal()
	w := s.Create(Workflow[string]{Code: "return 1", Items: []Item{ToolPermissionItem("shell:exec")}, Journal: j, Run: "intent"})
	if w.ID == "" || !w.CreatedAt.Equal(clock.now()) || w.CodeHash != CodeHash("return 1") {
		t.Fatalf("Create = %+v", w)
	}
	if s.Len() != 1 {
		t.Fatalf("Len = %d, want 1", s.Len())
	}
	got, err := s.Take(w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != w.ID || got.Journal != j || got.Run != "intent" || got.Items[0].Tool != "shell:exec" {
		t.Errorf("Take = %+v, want %+v", got, w)
	}
	_, err = s.Take(w.ID)
	wantNotFound(t, err)
	_, err = s.Take("never-created")
	wantNotFound(t, err)
	if s.Len() != 0 {
		t.Errorf("Len after take = %d", s.Len())
	}
}

func TestStoreTTL(t *testing.T) {
	clock := newClock()
	s := NewStore[string](0, clock.now) // default 5 minutes
	old := s.Create(Workflow[string]{Code: "a"})
	clock.advance(4*time.Minute + 59*time.Second)
	fresh := s.Create(Workflow[string]{Code: "b"})
	if _, err := s.Take(old.ID); err != nil {
		t.Fatalf("taken just before 5m: %v", err)
	}
	old = s.Create(Workflow[string]{Code: "a"})
	clock.advance(5 * time.Minute)
	_, err := s.Take(old.ID)
	wantNotFound(t, err)
	if pe, _ := pmlerr.As(err); pe.Details["workflow_id"] != old.ID {
		t.Errorf("details = %v", pe.Details)
	}
	// fresh is also past its TTL now and was purged by that Take
	if s.Len() != 0 {
		t.Errorf("Len = %d, want expired entries purged", s.Len())
	}
	_, err = s.Take(fresh.ID)
	wantNotFound(t, err)
}

func TestStorePurgesOnCreate(t *testing.T) {
	clock := newClock()
	s := NewStore[string](time.Minute, clock.now)
	for range 3 {
		s.Create(Workflow[string]{})
	}
	clock.advance(time.Minute)
	s.Create(Workflow[string]{})
	if s.Len() != 1 {
		t.Errorf("Len = %d, want 1 (three expired purged on Create)", s.Len())
	}
}

func TestStoreSeveralPending(t *testing.T) {
	s := NewStore[string](0, nil)
	ids := map[string]string{}
	for i := range 5 {
		code := fmt.Sprintf("return %d", i)
		ids[s.Create(Workflow[string]{Code: code}).ID] = code
	}
	if len(ids) != 5 || s.Len() != 5 {
		t.Fatalf("ids %d, Len %d, want 5 distinct", len(ids), s.Len())
	}
	for id, code := range ids {
		w, err := s.Take(id)
		if err != nil || w.Code != code {
			t.Errorf("Take(%s) = %q, %v; want %q", id, w.Code, err, code)
		}
	}
}

func TestStoreConcurrent(t *testing.T) {
	s := NewStore[string](0, nil)
	const n = 64
	ids := make(chan string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { ids <- s.Create(Workflow[string]{Code: fmt.Sprint(i)}).ID })
	}
	wg.Wait()
	close(ids)
	// every id is taken by two racers; exactly one may win
	var mu sync.Mutex
	wins := map[string]int{}
	for id := range ids {
		for range 2 {
			wg.Go(func() {
				if _, err := s.Take(id); err == nil {
					mu.Lock()
					wins[id]++
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if len(wins) != n {
		t.Errorf("%d workflows taken, want %d", len(wins), n)
	}
	for id, w := range wins {
		if w != 1 {
			t.Errorf("workflow %s taken %d times", id, w)
		}
	}
}

func TestWorkflowCheckCode(t *testing.T) {
	w := NewStore[string](0, nil).Create(Workflow[string]{Code: "await mcp.shell.exec({command:'ls'})"})
	if err := w.CheckCode(""); err != nil {
		t.Errorf("empty code rejected: %v", err)
	}
	if err := w.CheckCode("await mcp.shell.exec({command:'ls'})"); err != nil {
		t.Errorf("same code rejected: %v", err)
	}
	err := w.CheckCode("await mcp.shell.exec({command:'rm -rf /'})")
	if pmlerr.CodeOf(err, "") != pmlerr.InvalidRequest {
		t.Errorf("other code: err = %v, want %s", err, pmlerr.InvalidRequest)
	}
}
