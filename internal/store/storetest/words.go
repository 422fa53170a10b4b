package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pml-go/pml/internal/store"
)

// runToolWords: weights add up, also when written at once (two replicas
// learning the same thing both count); a scope keeps its newest
// MaxToolWords; bad rows are refused and nothing is written; the global
// count is of distinct orgs, of shared rows, and a withdrawal takes an
// org's share out.
func runToolWords(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	ctx := context.Background()
	a := store.Scope{Org: "acme", Project: "web"}
	row := store.ToolWord{Tool: "github:create_issue", Word: "ticket", Weight: 1, Shared: true}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.AddToolWords(ctx, a, []store.ToolWord{row}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := s.ToolWords(ctx, a)
	if err != nil || len(got) != 1 || got[0].Weight != 8 || got[0].UpdatedAt.IsZero() || !got[0].Shared {
		t.Fatalf("after 8 adds at once: %+v %v", got, err)
	}
	for _, bad := range []store.ToolWord{
		{Tool: "x:y", Word: "", Weight: 1},
		{Tool: "x:y", Word: strings.Repeat("w", store.MaxWordBytes+1), Weight: 1},
		{Tool: "", Word: "w", Weight: 1},
		{Tool: "x:y", Word: "w", Weight: -1},
	} {
		if err := s.AddToolWords(ctx, a, []store.ToolWord{{Tool: "ok:tool", Word: "fine", Weight: 1}, bad}); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("%+v: %v", bad, err)
		}
	}
	if got, _ := s.ToolWords(ctx, a); len(got) != 1 {
		t.Fatalf("a refused batch wrote: %+v", got)
	}
	// Bounded: past MaxToolWords the oldest go.
	batch := make([]store.ToolWord, 0, store.MaxToolWords)
	for i := range store.MaxToolWords {
		batch = append(batch, store.ToolWord{Tool: fmt.Sprintf("t:%d", i%500), Word: fmt.Sprintf("w%d", i), Weight: 1})
	}
	if err := s.AddToolWords(ctx, a, batch); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ToolWords(ctx, a); len(got) != store.MaxToolWords {
		t.Fatalf("kept %d, want %d", len(got), store.MaxToolWords)
	}

	// The global count: distinct orgs, shared rows only.
	for i, sc := range []store.Scope{{Org: "o1", Project: "p"}, {Org: "o1", Project: "q"}, {Org: "o2", Project: "p"}, {Org: "o3", Project: "p"}} {
		rows := []store.ToolWord{{Tool: "json:parse", Word: "decode", Weight: 1, Shared: true}, {Tool: "json:parse", Word: "secretive", Weight: 1, Shared: i == 0}}
		if err := s.AddToolWords(ctx, sc, rows); err != nil {
			t.Fatal(err)
		}
	}
	global := func() map[string]int {
		t.Helper()
		g, err := s.GlobalToolWords(ctx, 3, 100)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, w := range g {
			out[w.Tool+" "+w.Word] = w.Orgs
		}
		return out
	}
	if g := global(); g["json:parse decode"] != 3 || g["json:parse secretive"] != 0 {
		t.Fatalf("global words: %v", g)
	}
	if err := s.WithdrawToolWords(ctx, store.Scope{Org: "o3"}); err != nil {
		t.Fatal(err)
	}
	if g := global(); g["json:parse decode"] != 0 {
		t.Fatalf("after o3 withdrew: %v", g)
	}
	if err := s.WithdrawToolWords(ctx, store.Scope{}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("a withdrawal of no org: %v", err)
	}
}
