package approval

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDepsRoundTrip(t *testing.T) {
	ws := t.TempDir()
	d, err := OpenDeps(ws)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Installed("serena"); ok {
		t.Fatal("empty record has serena")
	}
	at := time.Date(2026, 1, 9, 10, 30, 0, 0, time.UTC)
	rec := DepRecord{Name: "serena", Version: "1.2.0", Command: "npx", Args: []string{"-y", "@anthropic/serena"}, InstalledAt: at, Integrity: "sha256-abc"}
	if err := d.Record(rec); err != nil {
		t.Fatal(err)
	}
	if err := d.Record(DepRecord{Name: "memory", Command: "uvx"}); err != nil {
		t.Fatal(err)
	}
	reopened, err := OpenDeps(ws)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := reopened.Installed("serena")
	if !ok || got.Name != rec.Name || got.Version != rec.Version || got.Command != rec.Command ||
		!slices.Equal(got.Args, rec.Args) || !got.InstalledAt.Equal(at) || got.Integrity != rec.Integrity {
		t.Errorf("round trip = %+v, want %+v", got, rec)
	}
	if m, ok := reopened.Installed("memory"); !ok || m.InstalledAt.IsZero() {
		t.Errorf("memory = %+v, %v; want a stamped InstalledAt", m, ok)
	}
	entries, err := os.ReadDir(filepath.Join(ws, ".pml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "deps.json" {
		t.Errorf(".pml holds %v; want only deps.json (no temp files left)", entries)
	}
	raw, err := os.ReadFile(filepath.Join(ws, ".pml", "deps.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Version   int                       `json:"version"`
		Installed map[string]map[string]any `json:"installed"`
	}
	if err := json.Unmarshal(raw, &f); err != nil || f.Version != 1 || f.Installed["serena"]["installedAt"] != "2026-01-09T10:30:00Z" {
		t.Errorf("deps.json = %s (%v)", raw, err)
	}
}

func TestDepsKeepsRecordsOfAnotherProcess(t *testing.T) {
	ws := t.TempDir()
	a, err := OpenDeps(ws)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenDeps(ws) // another pml process of the same workspace
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Record(DepRecord{Name: "one", Command: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Record(DepRecord{Name: "two", Command: "y"}); err != nil {
		t.Fatal(err)
	}
	c, err := OpenDeps(ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"one", "two"} {
		if _, ok := c.Installed(name); !ok {
			t.Errorf("%s lost", name)
		}
	}
	if _, ok := b.Installed("one"); !ok {
		t.Error("Record did not refresh the in-memory view")
	}
}

func TestDepsErrors(t *testing.T) {
	ws := t.TempDir()
	path := filepath.Join(ws, ".pml", "deps.json")
	writeFile(t, path, "{not json")
	if _, err := OpenDeps(ws); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("corrupt file: err = %v, want it to name %s", err, path)
	}
	writeFile(t, path, `{"version":99,"installed":{}}`)
	if _, err := OpenDeps(ws); err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Errorf("future version: err = %v", err)
	}
	writeFile(t, path, `{"version":1}`)
	d, err := OpenDeps(ws)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Record(DepRecord{}); err == nil {
		t.Error("recorded a dependency without a name")
	}
}
