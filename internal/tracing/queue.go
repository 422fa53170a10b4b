package tracing

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pml-go/pml/internal/atomicfile"
)

// Queue is the package's persisted outbox of sanitized traces, one JSON file
// per trace named "<sequence>-<instance>.json" and written with temp file +
// fsync + rename, so a crash at any point leaves either the whole trace or
// nothing, and an offline period only grows the directory up to its bound.
//
// Several processes may share a directory (two AI clients in one workspace):
// the instance part keeps their file names apart, each process sends what it
// pushed and what it found at open, and the gateway ignores a trace id it
// already has, so delivery is at-least-once and never lossy.
type Queue struct {
	dir      string
	max      int
	instance string

	mu      sync.Mutex
	entries []queued // in sequence order
	nextSeq uint64
	dropped int64
}

type queued struct {
	seq    uint64
	file   string // base name
	id     string
	parent string
}

// errCorrupt marks a queue file that exists but does not decode.
var errCorrupt = errors.New("corrupt queue file")

// staleTemp is the age after which a temp file is taken for the leftover of
// a crash rather than another process's write in progress.
const staleTemp = 10 * time.Minute

// OpenQueue opens (creating it if needed) the queue in dir, keeping at most
// maxTraces (at least 1). Traces already in dir are loaded; a file that does
// not decode is renamed *.corrupt and counted as dropped.
func OpenQueue(dir string, maxTraces int) (*Queue, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open trace queue: %w", err)
	}
	var inst [4]byte
	_, _ = rand.Read(inst[:])
	q := &Queue{dir: dir, max: max(maxTraces, 1), instance: hex.EncodeToString(inst[:])}
	if err := q.load(); err != nil {
		return nil, fmt.Errorf("open trace queue %s: %w", dir, err)
	}
	return q, nil
}

func (q *Queue) load() error {
	des, err := os.ReadDir(q.dir)
	if err != nil {
		return err
	}
	for _, de := range des {
		name := de.Name()
		if strings.Contains(name, ".tmp") { // a write cut short by a crash
			if info, err := de.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
				_ = os.Remove(filepath.Join(q.dir, name))
			}
			continue
		}
		seq, ok := parseQueueName(name)
		if !ok {
			continue
		}
		t, err := q.read(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // acked by another process meanwhile
		case errors.Is(err, errCorrupt):
			q.quarantine(name)
			continue
		case err != nil:
			return err
		}
		q.entries = append(q.entries, queued{seq: seq, file: name, id: t.TraceID, parent: t.ParentTraceID})
		q.nextSeq = max(q.nextSeq, seq+1)
	}
	slices.SortFunc(q.entries, func(a, b queued) int { return strings.Compare(a.file, b.file) })
	q.trim()
	return nil
}

// parseQueueName accepts "<20 digits>-<instance>.json".
func parseQueueName(name string) (uint64, bool) {
	base, ok := strings.CutSuffix(name, ".json")
	if !ok {
		return 0, false
	}
	num, _, ok := strings.Cut(base, "-")
	if !ok {
		return 0, false
	}
	seq, err := strconv.ParseUint(num, 10, 64)
	return seq, err == nil
}

// Push persists t (already sanitized) and returns once it is on disk. When
// the queue is full the oldest trace is dropped and counted.
func (q *Queue) Push(t Trace) error {
	body, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("queue trace %s: %w", t.TraceID, err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	seq := q.nextSeq
	name := fmt.Sprintf("%020d-%s.json", seq, q.instance)
	// Atomic without fsync: a trace is queued on every execution, and two
	// fsyncs cost milliseconds there. A crash of the process loses nothing;
	// only a power cut can lose the last traces written.
	if err := atomicfile.Write(filepath.Join(q.dir, name), body, atomicfile.Fast); err != nil {
		return fmt.Errorf("queue trace %s: %w", t.TraceID, err)
	}
	q.nextSeq++
	q.entries = append(q.entries, queued{seq: seq, file: name, id: t.TraceID, parent: t.ParentTraceID})
	q.trim()
	return nil
}

// trim drops the oldest entries beyond the bound. Called with q.mu held.
func (q *Queue) trim() {
	for len(q.entries) > q.max {
		_ = os.Remove(filepath.Join(q.dir, q.entries[0].file))
		q.entries = q.entries[1:]
		q.dropped++
	}
}

// Peek returns up to n traces, oldest first except that a trace whose parent
// is also queued comes right after that parent (a nested capability finishes,
// and is pushed, before the code that called it).
func (q *Queue) Peek(n int) ([]Trace, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []Trace
	var gone []string
	for _, e := range parentsFirst(q.entries) {
		if len(out) >= n {
			break
		}
		t, err := q.read(e.file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			gone = append(gone, e.file) // acked by another process
			continue
		case errors.Is(err, errCorrupt):
			q.quarantine(e.file)
			gone = append(gone, e.file)
			continue
		case err != nil:
			q.forget(gone)
			return out, fmt.Errorf("peek trace queue: %w", err)
		}
		out = append(out, t)
	}
	q.forget(gone)
	return out, nil
}

// Ack removes the traces with these ids: they were delivered.
func (q *Queue) Ack(ids []string) error { return q.remove(ids, false) }

// Discard removes the traces with these ids and counts them as dropped: the
// gateway rejected them for good.
func (q *Queue) Discard(ids []string) error { return q.remove(ids, true) }

func (q *Queue) remove(ids []string, drop bool) error {
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	var errs []error
	var files []string
	for _, e := range q.entries {
		if !set[e.id] {
			continue
		}
		files = append(files, e.file)
		if err := os.Remove(filepath.Join(q.dir, e.file)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		if drop {
			q.dropped++
		}
	}
	q.forget(files)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove traces from queue: %w", err)
	}
	return nil
}

// forget removes entries by file name. Called with q.mu held.
func (q *Queue) forget(files []string) {
	if len(files) == 0 {
		return
	}
	q.entries = slices.DeleteFunc(q.entries, func(e queued) bool { return slices.Contains(files, e.file) })
}

// Len returns the number of queued traces.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.entries)
}

// Dropped returns how many traces this Queue lost: pushed out by the bound,
// rejected by the gateway, or unreadable on disk.
func (q *Queue) Dropped() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.dropped
}

func (q *Queue) read(name string) (Trace, error) {
	b, err := os.ReadFile(filepath.Join(q.dir, name))
	if err != nil {
		return Trace{}, err
	}
	var t Trace
	if err := json.Unmarshal(b, &t); err != nil {
		return Trace{}, fmt.Errorf("%w %s: %v", errCorrupt, name, err)
	}
	return t, nil
}

// quarantine keeps an undecodable file for inspection, out of the queue.
func (q *Queue) quarantine(name string) {
	p := filepath.Join(q.dir, name)
	_ = os.Rename(p, p+".corrupt")
	q.dropped++
}

// parentsFirst orders entries oldest first, but emits each trace's queued
// children right after it. Cycles (bad data) fall back to age order.
func parentsFirst(entries []queued) []queued {
	index := make(map[string]bool, len(entries))
	for _, e := range entries {
		index[e.id] = true
	}
	children := map[string][]int{}
	var roots []int
	for i, e := range entries {
		if e.parent != "" && e.parent != e.id && index[e.parent] {
			children[e.parent] = append(children[e.parent], i)
		} else {
			roots = append(roots, i)
		}
	}
	out := make([]queued, 0, len(entries))
	done := make([]bool, len(entries))
	var emit func(i int)
	emit = func(i int) {
		if done[i] {
			return
		}
		done[i] = true
		out = append(out, entries[i])
		for _, c := range children[entries[i].id] {
			emit(c)
		}
	}
	for _, r := range roots {
		emit(r)
	}
	for i := range entries {
		emit(i)
	}
	return out
}
