package upstream

import (
	"strings"
	"sync"
)

// The last lines of a child's stderr are kept to explain a crash in the
// error the caller sees, not only in the debug log.
const (
	tailLines   = 5
	tailLineCap = 300
)

type stderrTail struct {
	mu    sync.Mutex
	lines []string
}

func (t *stderrTail) add(line string) {
	if len(line) > tailLineCap {
		line = strings.ToValidUTF8(line[:tailLineCap], "") + "…"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == tailLines {
		t.lines = append(t.lines[:0], t.lines[1:]...)
	}
	t.lines = append(t.lines, line)
}

func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, " | ")
}
