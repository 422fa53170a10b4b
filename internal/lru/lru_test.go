package lru

import (
	"sync"
	"testing"
)

func TestEvictsLeastRecentlyUsed(t *testing.T) {
	c := New[int, string](2, 1<<20)
	c.Add(1, "one", 1)
	c.Add(2, "two", 1)
	c.Get(1) // 2 is now the least recently used
	c.Add(3, "three", 1)
	if _, ok := c.Get(2); ok {
		t.Error("least recently used entry kept")
	}
	for _, k := range []int{1, 3} {
		if _, ok := c.Get(k); !ok {
			t.Errorf("entry %d evicted", k)
		}
	}
	if c.Len() != 2 {
		t.Errorf("Len = %d; want 2", c.Len())
	}
}

func TestBoundedByBytes(t *testing.T) {
	c := New[int, int](100, 10)
	for i := range 5 {
		c.Add(i, i, 4)
	}
	if c.Len() != 2 {
		t.Errorf("Len = %d; want 2 entries of 4 bytes within 10", c.Len())
	}
	c.Add(99, 99, 50) // larger than the bound on its own: kept alone
	if _, ok := c.Get(99); !ok || c.Len() != 1 {
		t.Errorf("oversized newest entry: present %v, Len %d; want it alone", ok, c.Len())
	}
}

func TestFirstAddWins(t *testing.T) {
	c := New[string, int](4, 100)
	if got := c.Add("k", 1, 1); got != 1 {
		t.Fatalf("Add returned %d", got)
	}
	if got := c.Add("k", 2, 1); got != 1 {
		t.Errorf("second Add returned %d; want the stored 1", got)
	}
}

func TestDisabled(t *testing.T) {
	c := New[int, int](0, 100)
	if got := c.Add(1, 7, 1); got != 7 || c.Len() != 0 {
		t.Errorf("disabled cache: Add = %d, Len = %d", got, c.Len())
	}
}

func TestConcurrentUse(t *testing.T) {
	c := New[int, int](16, 1<<20)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				k := (g*1000 + i) % 32
				if v, ok := c.Get(k); ok && v != k {
					t.Errorf("key %d holds %d", k, v)
					return
				}
				c.Add(k, k, 1)
			}
		}()
	}
	wg.Wait()
	if c.Len() > 16 {
		t.Errorf("Len = %d over the bound", c.Len())
	}
}
