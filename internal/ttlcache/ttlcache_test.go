package ttlcache

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestExpiry(t *testing.T) {
	c := New[string, int](time.Second, 10)
	if _, ok := c.Get("a", t0); ok {
		t.Fatal("empty cache found a value")
	}
	c.Put("a", 1, t0)
	for _, tc := range []struct {
		at   time.Duration
		want bool
	}{{0, true}, {999 * time.Millisecond, true}, {time.Second, true}, {time.Second + 1, false}, {time.Hour, false}} {
		if v, ok := c.Get("a", t0.Add(tc.at)); ok != tc.want || (ok && v != 1) {
			t.Errorf("Get at +%v = %d, %v; want found=%v", tc.at, v, ok, tc.want)
		}
	}
	// A new Put renews the entry.
	c.Put("a", 2, t0.Add(time.Hour))
	if v, ok := c.Get("a", t0.Add(time.Hour+time.Second/2)); !ok || v != 2 {
		t.Errorf("renewed: %d, %v", v, ok)
	}
}

// TestBounded: a flood of distinct keys never holds more than size entries.
func TestBounded(t *testing.T) {
	const size = 8
	c := New[int, int](time.Minute, size)
	for i := range 1000 {
		c.Put(i, i, t0)
		if n := c.Len(); n > size {
			t.Fatalf("after %d puts: %d entries", i+1, n)
		}
	}
	if v, ok := c.Get(999, t0); !ok || v != 999 {
		t.Errorf("latest entry lost: %d, %v", v, ok)
	}
}

func TestDisabled(t *testing.T) {
	for _, c := range []*Cache[string, int]{New[string, int](0, 10), New[string, int](-time.Second, 10), New[string, int](time.Second, 0), {}} {
		c.Put("a", 1, t0)
		if _, ok := c.Get("a", t0); ok || c.Len() != 0 {
			t.Errorf("%+v stored a value", c)
		}
	}
}

func TestClear(t *testing.T) {
	c := New[string, int](time.Minute, 10)
	c.Put("a", 1, t0)
	c.Clear()
	if _, ok := c.Get("a", t0); ok {
		t.Fatal("cleared entry found")
	}
	c.Put("b", 2, t0)
	if v, ok := c.Get("b", t0); !ok || v != 2 {
		t.Errorf("after Clear: %d, %v", v, ok)
	}
}

func TestConcurrent(t *testing.T) {
	c := New[string, int](time.Minute, 16)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				k := fmt.Sprint(g, i%20)
				c.Put(k, i, t0)
				c.Get(k, t0)
				if i%50 == 0 {
					c.Clear()
				}
			}
		})
	}
	wg.Wait()
	if c.Len() > 16 {
		t.Errorf("%d entries", c.Len())
	}
}
