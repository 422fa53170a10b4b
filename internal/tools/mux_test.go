package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
)

// brokenProvider stands in for an upstream server that cannot list its tools.
type brokenProvider struct{}

func (brokenProvider) Tools(context.Context) ([]Info, error) {
	return nil, errors.New("server crashed")
}

func (brokenProvider) Call(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("server crashed")
}

func constTool(id, result string) Func {
	return Func{Info: Info{ID: id}, Run: func(context.Context, json.RawMessage) (any, error) { return result, nil }}
}

func TestMuxRoutesByNamespace(t *testing.T) {
	ctx := context.Background()
	m := NewMux()
	m.Register("a", NewTable(constTool("a:x", "first")))
	m.Register("b", NewTable(constTool("b:y", "b")))
	out, err := m.Call(ctx, "a:x", nil)
	if err != nil || string(out) != `"first"` {
		t.Fatalf("a:x = %s, %v", out, err)
	}
	m.Register("a", NewTable(constTool("a:x", "second")))
	if out, _ := m.Call(ctx, "a:x", nil); string(out) != `"second"` {
		t.Fatalf("after re-register a:x = %s, want second", out)
	}
	if got := m.Namespaces(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("Namespaces() = %v", got)
	}
	if _, ok := m.Provider("b"); !ok {
		t.Fatal("Provider(b) not found")
	}
	m.Unregister("b")
	if _, ok := m.Provider("b"); ok {
		t.Fatal("Provider(b) found after Unregister")
	}
	_, err = m.Call(ctx, "b:y", nil)
	if pmlerr.CodeOf(err, "") != pmlerr.UnknownTool {
		t.Fatalf("b:y after Unregister = %v, want UNKNOWN_TOOL", err)
	}
}

func TestMuxToolsSortedFilteredAndDeduplicated(t *testing.T) {
	var logs bytes.Buffer
	m := NewMux().WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))
	shared := NewTable(constTool("fs:read", ""), constTool("sh:exec", ""), constTool("git:log", ""))
	m.Register("sh", shared)
	m.Register("fs", shared)
	m.Register("json", NewTable(constTool("json:parse", ""), constTool("json:b", "")))
	m.Register("broken", brokenProvider{})
	infos, err := m.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"fs:read", "json:b", "json:parse", "sh:exec"}
	if got := ids(infos); !slices.Equal(got, want) {
		t.Fatalf("Tools() = %v, want %v", got, want)
	}
	if !strings.Contains(logs.String(), "server crashed") {
		t.Fatalf("provider failure not logged; log: %s", logs.String())
	}
}

func TestMuxUnknownToolSuggests(t *testing.T) {
	ctx := context.Background()
	m := NewMux().WithLogger(slog.New(slog.DiscardHandler))
	m.Register("json", NewTable(constTool("json:parse", ""), constTool("json:stringify", "")))
	m.Register("filesystem", NewTable(constTool("filesystem:read_file", "")))
	cases := []struct {
		id   string
		want []string
	}{
		{"json:parce", []string{"json:parse"}},             // unknown action: the provider's error is enriched
		{"fs:read_file", []string{"filesystem:read_file"}}, // unknown namespace
		{"filesystm:read_file", []string{"filesystem:read_file"}},
	}
	for _, c := range cases {
		_, err := m.Call(ctx, c.id, nil)
		pe, ok := pmlerr.As(err)
		if !ok || pe.Code != pmlerr.UnknownTool {
			t.Fatalf("Call(%s) = %v, want UNKNOWN_TOOL", c.id, err)
		}
		sugg, _ := pe.Details["suggestions"].([]string)
		if len(sugg) == 0 || sugg[0] != c.want[0] || len(sugg) > 3 {
			t.Errorf("Call(%s) suggestions = %v, want %v first", c.id, sugg, c.want)
		}
		if !strings.Contains(pe.Message, fmt.Sprintf("%q", c.want[0])) {
			t.Errorf("Call(%s) message %q does not name %s", c.id, pe.Message, c.want[0])
		}
	}
}

func TestMuxConcurrentUse(t *testing.T) {
	ctx := context.Background()
	m := NewMux()
	var wg sync.WaitGroup
	for i := range 8 {
		ns := fmt.Sprintf("n%d", i)
		wg.Go(func() {
			for range 50 {
				m.Register(ns, NewTable(constTool(ns+":t", ns)))
				if out, err := m.Call(ctx, ns+":t", nil); err != nil || string(out) != fmt.Sprintf("%q", ns) {
					t.Errorf("Call(%s:t) = %s, %v", ns, out, err)
					return
				}
				if _, err := m.Tools(ctx); err != nil {
					t.Error(err)
					return
				}
				m.Unregister(ns)
			}
		})
	}
	wg.Wait()
}

func TestMuxIsAProvider(t *testing.T) {
	inner := NewMux()
	inner.Register("a", NewTable(constTool("a:x", "nested")))
	outer := NewMux()
	outer.Register("a", inner)
	if out, err := outer.Call(context.Background(), "a:x", nil); err != nil || string(out) != `"nested"` {
		t.Fatalf("nested mux call = %s, %v", out, err)
	}
}
