package learning

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/sqlite"
)

// A run's intent and the discover before it become words of its tools, for
// its tenant at once and nobody else; the global layer takes a word only
// once K orgs taught it of a tool every tenant sees, and only words of
// letters (no path, number or address crosses); a tenant's words decay.
func TestWordsRunsTeach(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "pml.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	clock := &fakeClock{time.Now()} // the store stamps rows with the real time
	sync := func(work func(context.Context)) bool { work(t.Context()); return true }
	g := newGlobal(st, GlobalConfig{K: 3, Common: func(tool string) bool { return strings.HasPrefix(tool, "airbnb:") }})
	w := newWords(st, sync, clock.now, g, func() {}, nil)
	ctx := t.Context()
	orgs := []store.Scope{{Org: "o1", Project: "p"}, {Org: "o2", Project: "p"}, {Org: "o3", Project: "p"}, {Org: "o4", Project: "p"}}

	w.noteQuery(orgs[0], "ai", "lodging near the station")
	w.learn(orgs[0], "ai", "find somewhere to stay in Lyon /home/alice/notes.txt 42", []string{"airbnb:airbnb_search", "private:tool"})
	text := w.index(ctx, orgs[0]).texts["airbnb:airbnb_search"]
	for _, want := range []string{"somewher", "stay", "lodg"} {
		if !strings.Contains(text, want) {
			t.Fatalf("the tenant's words of the tool: %q, want %q", text, want)
		}
	}
	if x := w.index(ctx, orgs[3]); len(x.texts) != 0 {
		t.Fatalf("another tenant sees %v", x.texts)
	}
	// Two more orgs teach the same: the global layer has it, words of
	// letters of the common tool only.
	for _, o := range orgs[1:3] {
		w.learn(o, "ai", "find somewhere to stay in Lyon /home/alice/notes.txt 42", []string{"airbnb:airbnb_search", "private:tool"})
	}
	if err := g.refresh(ctx); err != nil {
		t.Fatal(err)
	}
	global := g.current().words
	if !strings.Contains(global.texts["airbnb:airbnb_search"], "stay") || global.texts["private:tool"] != "" {
		t.Fatalf("global words: %v", global.texts)
	}
	for _, leak := range []string{"alic", "home", "notes.txt", "42"} {
		if strings.Contains(global.texts["airbnb:airbnb_search"], leak) {
			t.Fatalf("%q crossed to other tenants: %q", leak, global.texts["airbnb:airbnb_search"])
		}
	}
	// Decay: a year on, a word taught once weighs next to nothing.
	clock.t = clock.t.Add(365 * 24 * time.Hour)
	w.cache.Clear()
	for _, list := range w.index(ctx, orgs[0]).byWord {
		for _, tw := range list {
			if tw.weight > 0.01 {
				t.Fatalf("undecayed after a year: %+v", tw)
			}
		}
	}
}

// A tool's own words come first and count as the tenant taught them; the
// global layer adds only the words the tenant has not.
func TestMergeLearned(t *testing.T) {
	for _, c := range []struct{ own, global, want string }{
		{"", "", ""},
		{"stay stay lodg ", "", "stay stay lodg "},
		{"", "hotel ", "hotel "},
		{"stay stay start ", "stay art hotel ", "stay stay start art hotel "},
	} {
		if got := mergeLearned(c.own, c.global); got != c.want {
			t.Errorf("mergeLearned(%q, %q) = %q, want %q", c.own, c.global, got, c.want)
		}
	}
}
