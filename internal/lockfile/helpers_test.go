package lockfile

import (
	"fmt"
	"testing"

	"github.com/pml-go/pml/internal/registry/fqdn"
)

// version returns the five-part name and entry of one version of a tool whose
// code is content, as a registry fetch would give them.
func version(ns, action, content string) (string, Entry) {
	n, integrity := fqdn.ForCode("casys", "pml", ns, action, content)
	return n.String(), Entry{Integrity: integrity, FetchedAt: "2026-01-07T12:00:00Z", Type: "code", Routing: "client"}
}

func open(t testing.TB, ws string, keep func(string) bool) *Lockfile {
	t.Helper()
	l, err := Open(ws, keep)
	if err != nil {
		t.Fatalf("Open(%s): %v", ws, err)
	}
	return l
}

func record(t testing.TB, l *Lockfile, name string, e Entry) {
	t.Helper()
	if err := l.Record(name, e); err != nil {
		t.Fatalf("Record(%s): %v", name, err)
	}
}

// workerEntry is the i-th distinct entry a concurrent writer records.
func workerEntry(writer string, i int) (string, Entry) {
	return version(writer, fmt.Sprintf("tool_%d", i), writer+fmt.Sprint(i))
}
