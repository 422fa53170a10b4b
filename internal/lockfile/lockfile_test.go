package lockfile

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/registry/fqdn"
)

func TestFirstRecordCreatesFile(t *testing.T) {
	ws := t.TempDir()
	l := open(t, ws, nil)
	path := filepath.Join(ws, ".pml", "mcp.lock")
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open created %s (err %v); only a record should", path, err)
	}
	name, e := version("fs", "read_json", "return 1;")
	res, _, err := l.Check(name, e.Integrity)
	if err != nil || res != New {
		t.Fatalf("Check on empty lockfile = %v, %v; want new", res, err)
	}
	record(t, l, name, e)

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version int
		Entries map[string]map[string]string
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	want := map[string]string{"integrity": e.Integrity, "fetchedAt": e.FetchedAt, "type": "code", "routing": "client"}
	if doc.Version != 1 || len(doc.Entries) != 1 || !mapsEqual(doc.Entries[name], want) {
		t.Errorf("file content:\n%s\nwant version 1 and entry %s = %v", data, name, want)
	}
	if got, ok := open(t, ws, nil).Get(name); !ok || got != e {
		t.Errorf("reopened Get(%s) = %+v, %v", name, got, ok)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestRecordFillsFetchedAt(t *testing.T) {
	l := open(t, t.TempDir(), nil)
	name, e := version("fs", "read_json", "x")
	e.FetchedAt = ""
	record(t, l, name, e)
	got, _ := l.Get(name)
	if !strings.HasSuffix(got.FetchedAt, "Z") || len(got.FetchedAt) != len("2026-01-07T12:00:00Z") {
		t.Errorf("FetchedAt = %q, want an RFC 3339 UTC time", got.FetchedAt)
	}
}

func TestCheckMatchAndMismatch(t *testing.T) {
	ws := t.TempDir()
	l := open(t, ws, nil)
	v1, e1 := version("fs", "read_json", "return 1;")
	v2, e2 := version("fs", "read_json", "return 2;")
	record(t, l, v1, e1)

	if res, m, err := l.Check(v1, e1.Integrity); err != nil || res != Match || m != nil {
		t.Errorf("Check(same) = %v, %v, %v; want match", res, m, err)
	}
	base := strings.TrimSuffix(v1, v1[strings.LastIndexByte(v1, '.'):])
	if res, _, err := l.Check(base, e1.Integrity); err != nil || res != Match {
		t.Errorf("Check(four-part, same) = %v, %v; want match", res, err)
	}

	res, m, err := l.Check(v2, e2.Integrity)
	if err != nil || res != Mismatch {
		t.Fatalf("Check(new version) = %v, %v; want mismatch", res, err)
	}
	want := MismatchInfo{
		FQDN: v2, Base: base,
		OldHash: fqdn.Hash4(e1.Integrity), NewHash: fqdn.Hash4(e2.Integrity),
		OldIntegrity: e1.Integrity, NewIntegrity: e2.Integrity, OldFetchedAt: e1.FetchedAt,
	}
	if *m != want {
		t.Errorf("mismatch = %+v\nwant %+v", *m, want)
	}
	wantDesc := "Hash changed for " + base + ". Old: " + want.OldHash + ", New: " + want.NewHash +
		". This could indicate a legitimate update or potential MITM attack."
	if m.Description() != wantDesc {
		t.Errorf("Description() = %q", m.Description())
	}

	// The four-part form of a changed integrity is a mismatch too, named by
	// the hash the integrity implies.
	if res, m, err := l.Check(base, e2.Integrity); err != nil || res != Mismatch || m.FQDN != v2 {
		t.Errorf("Check(four-part, changed) = %v, %+v, %v", res, m, err)
	}

	// Approval: the new version replaces the old one.
	record(t, l, v2, e2)
	if _, ok := l.Get(v1); ok {
		t.Errorf("old version %s still recorded", v1)
	}
	if got, ok := l.Get(base); !ok || got != e2 {
		t.Errorf("Get(%s) = %+v, %v; want the new version", base, got, ok)
	}
	if n := len(open(t, ws, nil).Entries()); n != 1 {
		t.Errorf("%d entries on disk, want 1", n)
	}
	if res, _, err := l.Check(v2, e2.Integrity); err != nil || res != Match {
		t.Errorf("Check after approval = %v, %v; want match", res, err)
	}
}

func TestCheckSeesOtherWriters(t *testing.T) {
	ws := t.TempDir()
	a, b := open(t, ws, nil), open(t, ws, nil)
	v1, e1 := version("fs", "read_json", "one")
	if res, _, _ := b.Check(v1, e1.Integrity); res != New {
		t.Fatalf("before any record: %v", res)
	}
	record(t, a, v1, e1)
	if res, _, err := b.Check(v1, e1.Integrity); err != nil || res != Match {
		t.Errorf("b.Check after a recorded = %v, %v; want match", res, err)
	}
	v2, e2 := version("fs", "read_json", "two")
	record(t, b, v2, e2)
	if got, ok := a.Get(v2); !ok || got != e2 {
		t.Errorf("a.Get(%s) after b recorded = %+v, %v", v2, got, ok)
	}
}

func TestCheckRejectsInconsistentInput(t *testing.T) {
	l := open(t, t.TempDir(), nil)
	v1, e1 := version("fs", "read_json", "one")
	_, e2 := version("fs", "read_json", "two")

	// The registry named one version and served another's content.
	_, _, err := l.Check(v1, e2.Integrity)
	if pmlerr.CodeOf(err, "") != pmlerr.IntegrityError {
		t.Errorf("Check(name, other content) error = %v; want INTEGRITY_ERROR", err)
	}
	if err := l.Record(v1, e2); pmlerr.CodeOf(err, "") != pmlerr.IntegrityError {
		t.Errorf("Record(name, other content) error = %v; want INTEGRITY_ERROR", err)
	}
	if _, _, err := l.Check(v1, ""); pmlerr.CodeOf(err, "") != pmlerr.IntegrityError {
		t.Errorf("Check with no integrity: %v; want INTEGRITY_ERROR", err)
	}
	if _, _, err := l.Check("not.a.name", e1.Integrity); !errors.Is(err, fqdn.ErrInvalid) {
		t.Errorf("Check(bad name) = %v; want fqdn.ErrInvalid", err)
	}
	base := v1[:strings.LastIndexByte(v1, '.')]
	if err := l.Record(base, e1); pmlerr.CodeOf(err, "") != pmlerr.InvalidRequest {
		t.Errorf("Record(four-part) = %v; want INVALID_REQUEST", err)
	}
	if n := len(l.Entries()); n != 0 {
		t.Errorf("rejected records left %d entries", n)
	}
}

func TestGet(t *testing.T) {
	l := open(t, t.TempDir(), nil)
	v1, e1 := version("fs", "read_json", "one")
	v2, _ := version("fs", "read_json", "two")
	record(t, l, v1, e1)
	base := v1[:strings.LastIndexByte(v1, '.')]
	for _, tt := range []struct {
		name string
		ok   bool
	}{{v1, true}, {base, true}, {v2, false}, {"casys.pml.fs.other", false}, {"garbage", false}} {
		got, ok := l.Get(tt.name)
		if ok != tt.ok || (ok && got != e1) {
			t.Errorf("Get(%q) = %+v, %v; want ok=%v", tt.name, got, ok, tt.ok)
		}
	}
}

func TestOpenCleansUp(t *testing.T) {
	ws := t.TempDir()
	l := open(t, ws, nil)
	kept, ek := version("fs", "read_json", "kept")
	gone, eg := version("old-tool", "server", "gone")
	record(t, l, kept, ek)
	record(t, l, gone, eg)

	var asked []string
	cleaned := open(t, ws, func(base string) bool {
		asked = append(asked, base)
		return !strings.Contains(base, "old-tool")
	})
	if len(asked) == 0 || !strings.Contains(strings.Join(asked, " "), "casys.pml.old-tool.server") || strings.Contains(strings.Join(asked, " "), gone) {
		t.Errorf("keep was asked %q; want four-part bases", asked)
	}
	if _, ok := cleaned.Get(gone); ok {
		t.Errorf("%s survived cleanup", gone)
	}
	onDisk := open(t, ws, nil).Entries()
	if _, ok := onDisk[gone]; ok || len(onDisk) != 1 {
		t.Errorf("on disk after cleanup: %v; want only %s", onDisk, kept)
	}
	if res, _, _ := cleaned.Check(gone, eg.Integrity); res != New {
		t.Errorf("cleaned entry checks as %v; want new (a re-fetch re-records it)", res)
	}
}

func TestOpenWithoutRemovalsDoesNotWrite(t *testing.T) {
	ws := t.TempDir()
	name, e := version("fs", "read_json", "x")
	record(t, open(t, ws, nil), name, e)
	path := filepath.Join(ws, ".pml", "mcp.lock")
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	open(t, ws, func(string) bool { return true })
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Error("Open rewrote the file although keep removed nothing")
	}
}

func TestCorruptFile(t *testing.T) {
	v1, e1 := version("fs", "read_json", "one")
	v2, e2 := version("fs", "read_json", "two")
	entry := func(name string, e Entry) string {
		b, _ := json.Marshal(e)
		return `"` + name + `":` + string(b)
	}
	tests := map[string]struct{ content, mention string }{
		"empty":          {"", "invalid JSON"},
		"truncated":      {`{"version":1,"entries":{`, "invalid JSON"},
		"trailing data":  {`{"version":1,"entries":{}} {}`, "after the top-level"},
		"wrong version":  {`{"version":2,"entries":{}}`, "unsupported version 2"},
		"no version":     {`{"entries":{}}`, "unsupported version 0"},
		"bad key":        {`{"version":1,"entries":{"nope":{"integrity":"sha256-00"}}}`, "entry key"},
		"four-part key":  {`{"version":1,"entries":{"a.b.c.d":{"integrity":"sha256-00"}}}`, "no hash"},
		"no integrity":   {`{"version":1,"entries":{"a.b.c.d.0000":{"fetchedAt":"x"}}}`, "empty integrity"},
		"wrong hash":     {`{"version":1,"entries":{` + entry(v1[:len(v1)-4]+"0000", e1) + `}}`, "does not match"},
		"two versions":   {`{"version":1,"entries":{` + entry(v1, e1) + `,` + entry(v2, e2) + `}}`, "same casys.pml.fs.read_json"},
		"entries string": {`{"version":1,"entries":"x"}`, "invalid JSON"},
	}
	for label, tt := range tests {
		t.Run(label, func(t *testing.T) {
			ws := t.TempDir()
			path := filepath.Join(ws, ".pml", "mcp.lock")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Open(ws, func(string) bool { return false })
			if err == nil {
				t.Fatal("Open succeeded on a corrupted file")
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q: want ErrCorrupt naming %s and mentioning %q", err, path, tt.mention)
			}
			if got, _ := os.ReadFile(path); string(got) != tt.content {
				t.Errorf("file changed to %q", got)
			}
		})
	}
}

func TestFileCorruptedAfterOpen(t *testing.T) {
	ws := t.TempDir()
	l := open(t, ws, nil)
	v1, e1 := version("fs", "read_json", "one")
	record(t, l, v1, e1)
	path := filepath.Join(ws, ".pml", "mcp.lock")
	if err := os.WriteFile(path, []byte("{oops"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Check(v1, e1.Integrity); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Check = %v; want ErrCorrupt", err)
	}
	v2, e2 := version("fs", "other", "two")
	if err := l.Record(v2, e2); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Record = %v; want ErrCorrupt", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "{oops" {
		t.Errorf("Record overwrote a corrupted file: %q", got)
	}
	if _, ok := l.Get(v1); !ok {
		t.Error("Get lost the last good state")
	}
}

func TestOpenEmptyWorkspace(t *testing.T) {
	if _, err := Open("", nil); err == nil {
		t.Error("Open(\"\") succeeded")
	}
}

// A server named by its package's own SRI integrity pins the metadata it
// installs from in Content: a changed command line under the same
// integrity is a mismatch, and the file keeps the pin.
func TestContentPinnedBesideIntegrity(t *testing.T) {
	ws := t.TempDir()
	l := open(t, ws, nil)
	sri := "sha512-" + strings.Repeat("A", 86) + "=="
	n, integrity := fqdn.ForStdio("serena", nil, sri)
	name := n.String()
	good, evil := fqdn.Integrity([]byte(`{"args":["serena"]}`)), fqdn.Integrity([]byte(`{"args":["evil"]}`))
	record(t, l, name, Entry{Integrity: integrity, Content: good, Type: "stdio", Routing: "client"})

	if res, _, err := l.CheckEntry(name, Entry{Integrity: integrity, Content: good}); err != nil || res != Match {
		t.Fatalf("same content: %v %v", res, err)
	}
	res, m, err := l.CheckEntry(name, Entry{Integrity: integrity, Content: evil})
	if err != nil || res != Mismatch || m.OldContent != good || m.NewContent != evil {
		t.Fatalf("changed content under the same integrity: %v %+v %v", res, m, err)
	}
	if d := m.Description(); !strings.Contains(d, "Content changed for pml.mcp.serena.server") || !strings.Contains(d, good) || !strings.Contains(d, evil) {
		t.Errorf("Description() = %q", d)
	}
	// Without a content pin, the integrity stands for the content: not this one.
	if res, _, _ := l.Check(name, integrity); res != Mismatch {
		t.Errorf("Check without content = %v; want mismatch", res)
	}
	if got, ok := open(t, ws, nil).Get(name); !ok || got.Content != good {
		t.Errorf("reopened: %+v %v", got, ok)
	}

	// A content pin equal to the integrity is not stored twice.
	v1, e1 := version("fs", "read_json", "one")
	e1.Content = e1.Integrity
	record(t, l, v1, e1)
	if got, _ := l.Get(v1); got.Content != "" {
		t.Errorf("redundant content stored: %+v", got)
	}
	// A malformed pin is refused and nothing is written.
	v2, e2 := version("fs", "write_json", "two")
	e2.Content = "md5-nope"
	if err := l.Record(v2, e2); pmlerr.CodeOf(err, "") != pmlerr.IntegrityError {
		t.Errorf("malformed content: %v; want INTEGRITY_ERROR", err)
	}
	if _, ok := l.Get(v2); ok {
		t.Error("malformed content recorded")
	}
}
