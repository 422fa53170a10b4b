package analysis

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pml-go/pml/internal/lru"
	"github.com/pml-go/pml/internal/pmlerr"
)

func TestAnalyzerCachesByCode(t *testing.T) {
	z := New(8)
	a1, err := z.Analyze("await mcp.a.b()")
	if err != nil {
		t.Fatal(err)
	}
	a2, err := z.Analyze("await mcp.a.b()")
	if err != nil {
		t.Fatal(err)
	}
	if a1 != a2 {
		t.Error("same code gave two analyses")
	}
	b, err := z.Analyze("await mcp.a.b() ")
	if err != nil {
		t.Fatal(err)
	}
	if b == a1 || b.CodeHash == a1.CodeHash {
		t.Error("different code shared an analysis")
	}
	uncached, err := Analyze("await mcp.a.b()")
	if err != nil {
		t.Fatal(err)
	}
	if uncached.JS != a1.JS || uncached.CodeHash != a1.CodeHash || dagString(uncached.DAG) != dagString(a1.DAG) {
		t.Error("cached and uncached analyses differ")
	}
}

func TestAnalyzerIsBoundedLRU(t *testing.T) {
	z := New(2)
	code := func(i int) string { return fmt.Sprintf("return %d", i) }
	first := map[int]*Analysis{}
	for i := range 3 {
		a, err := z.Analyze(code(i))
		if err != nil {
			t.Fatal(err)
		}
		first[i] = a
		if i == 1 {
			z.Analyze(code(0)) // 0 is now more recent than 1
		}
	}
	if z.Len() != 2 {
		t.Fatalf("cache holds %d entries; want 2", z.Len())
	}
	if a, _ := z.Analyze(code(0)); a != first[0] {
		t.Error("recently used entry was evicted")
	}
	if a, _ := z.Analyze(code(1)); a == first[1] {
		t.Error("least recently used entry was kept")
	}
}

func TestAnalyzerCachesErrorsAsCopies(t *testing.T) {
	z := New(4)
	_, err1 := z.Analyze("const x = ;")
	pe1, ok := pmlerr.As(err1)
	if !ok || pe1.Code != pmlerr.SyntaxError {
		t.Fatalf("error %v; want SYNTAX_ERROR", err1)
	}
	pe1.With("workflow_id", "w1")
	_, err2 := z.Analyze("const x = ;")
	pe2, _ := pmlerr.As(err2)
	if pe2 == pe1 || pe2.Details["workflow_id"] != nil {
		t.Error("a caller's change to a cached error leaked to the next caller")
	}
	if pe2.Details["line"] != 1 {
		t.Errorf("cached error details %v", pe2.Details)
	}
}

func TestAnalyzerDisabledCache(t *testing.T) {
	z := New(0)
	a1, _ := z.Analyze("return 1")
	a2, _ := z.Analyze("return 1")
	if a1 == a2 || z.Len() != 0 {
		t.Error("New(0) cached")
	}
}

func TestAnalyzerConcurrentCallersShareOneResult(t *testing.T) {
	z := New(16)
	const callers = 8
	results := make([]*Analysis, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := z.Analyze(benchSnippet)
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = a
			a.OriginalPosition(3, 1) // decodes the source map once, under race detection
		}()
	}
	wg.Wait()
	for _, a := range results[1:] {
		if a != results[0] {
			t.Fatal("concurrent callers got different analyses of the same code")
		}
	}
}

func TestAnalyzerBoundsMemory(t *testing.T) {
	const maxBytes = 256 << 10
	z := &Analyzer{cache: lru.New[[32]byte, *entry](1<<20, maxBytes)} // the entry count would let everything in
	body := strings.Repeat("await mcp.a.b({ x: 1 });\n", 100)
	for i := range 40 {
		if _, err := z.Analyze(fmt.Sprintf("// %d\n%s", i, body)); err != nil {
			t.Fatal(err)
		}
	}
	if z.Len() < 2 || z.Len() == 40 {
		t.Errorf("cache holds %d entries of %d-line analyses; want them bounded by %d bytes", z.Len(), 100, maxBytes)
	}
}
