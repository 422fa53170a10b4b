package tracing

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pml-go/pml/internal/filelock"
	"github.com/pml-go/pml/internal/rawio"
)

// Queue is the package's persisted outbox of sanitized traces. Each process
// appends to a log of its own, "<instance>.log", one line per event: a
// trace queued at some time as "+ <unix nanoseconds> <trace JSON>", and a
// trace delivered, refused or dropped as "- <trace id>".
//
// Appending a line costs microseconds where creating a file per trace (the
// first design) cost up to a millisecond, on every execution. A crash can
// cut only the last line short, and a cut line is dropped when read.
//
// Several processes may share a directory (two AI clients in one
// workspace). A process holds an exclusive lock on "<instance>.lock" while
// its log is open; at open, a Queue adopts every log whose lock it can take
// (its process ended): it copies the traces still queued there into its own
// log, then deletes that log. So each trace is sent by one process, and a
// crash between the copy and the delete only sends some twice, which the
// gateway ignores (it keeps the first of a trace id).
type Queue struct {
	dir      string
	max      int
	instance string
	unlock   func() // releases <instance>.lock

	mu      sync.Mutex
	f       *rawio.File // the log, opened for append; nil once closed
	size    int64       // bytes in the log
	live    int64       // bytes of the log's lines for queued traces
	entries []queued    // oldest first
	dropped int64
	held    int // bytes of JSON of the traces held in memory (queued.mem)
}

type queued struct {
	id, parent string
	at         int64 // unix nanoseconds when first queued
	off        int64 // of the trace JSON in the log
	n          int   // its length
	// mem is the trace as this process pushed it, while the queue holds it
	// in memory (maxHeld): Peek returns it without reading and decoding the
	// log line. nil for a trace adopted from the log of an ended process.
	mem *Trace
}

// maxHeld bounds the JSON bytes of the traces a Queue also holds in memory:
// a full batch of short runs' traces, not a long offline backlog, whose
// traces are read back from the log.
const maxHeld = 4 << 20

// lineLen is the length of the log line of e.
func (e queued) lineLen() int64 {
	return int64(len("+ ") + len(strconv.FormatInt(e.at, 10)) + len(" ") + e.n + len("\n"))
}

// errClosed is Push's answer after Close.
var errClosed = errors.New("trace queue is closed")

// staleTemp is the age after which a temp file is taken for the leftover of
// a crash rather than another process's write in progress.
const staleTemp = 10 * time.Minute

// compactMin is the log size below which removed lines are left in place.
const compactMin = 1 << 20

// OpenQueue opens the queue in dir (creating it if needed), keeping at most
// maxTraces (at least 1): the oldest beyond that are dropped and counted.
// It adopts the logs of processes that ended (see Queue); a line of theirs
// that does not decode is counted as dropped.
func OpenQueue(dir string, maxTraces int) (*Queue, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open trace queue: %w", err)
	}
	var inst [6]byte
	_, _ = rand.Read(inst[:])
	q := &Queue{dir: dir, max: max(maxTraces, 1), instance: hex.EncodeToString(inst[:])}
	unlock, err := filelock.TryLock(q.path(".lock"))
	if err != nil {
		return nil, fmt.Errorf("open trace queue %s: %w", dir, err)
	}
	q.unlock = unlock
	q.f, err = openLog(q.path(".log"), os.O_CREATE|os.O_EXCL|os.O_RDWR|os.O_APPEND)
	if err == nil {
		err = q.adopt()
	}
	if err != nil {
		q.Close()
		return nil, fmt.Errorf("open trace queue %s: %w", dir, err)
	}
	return q, nil
}

func (q *Queue) path(suffix string) string { return filepath.Join(q.dir, q.instance+suffix) }

// adopt loads what ended processes left: their logs, and the one-file-per-
// trace queue of the first design.
func (q *Queue) adopt() error {
	des, err := os.ReadDir(q.dir)
	if err != nil {
		return err
	}
	var found []queuedTrace
	var done []func() // deletes what was adopted, once it is in our log
	seen := map[string]bool{q.instance: true}
	for _, de := range des {
		name := de.Name()
		switch {
		case strings.Contains(name, ".tmp"): // a write cut short by a crash
			if info, err := de.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
				_ = os.Remove(filepath.Join(q.dir, name))
			}
		case strings.HasSuffix(name, ".log") || strings.HasSuffix(name, ".lock"):
			inst := strings.TrimSuffix(strings.TrimSuffix(name, ".log"), ".lock")
			if seen[inst] {
				continue
			}
			seen[inst] = true
			traces, cleanup, err := q.adoptLog(inst)
			if err != nil {
				return err
			}
			found = append(found, traces...)
			done = append(done, cleanup)
		default:
			if !isFileTraceName(name) {
				continue
			}
			t, err := readFileTrace(filepath.Join(q.dir, name))
			switch {
			case errors.Is(err, fs.ErrNotExist):
				continue // adopted by another process meanwhile
			case errors.Is(err, errCorrupt):
				p := filepath.Join(q.dir, name)
				_ = os.Rename(p, p+".corrupt") // kept for inspection
				q.dropped++
				continue
			case err != nil:
				return err
			}
			found = append(found, t)
			done = append(done, func() { _ = os.Remove(filepath.Join(q.dir, name)) })
		}
	}
	// Oldest first; a trace found twice (a crash mid-adoption) once.
	slices.SortStableFunc(found, func(a, b queuedTrace) int { return cmp.Compare(a.at, b.at) })
	ids := map[string]bool{}
	var buf bytes.Buffer
	for _, t := range found {
		if ids[t.id] {
			continue
		}
		ids[t.id] = true
		q.stage(&buf, t.id, t.parent, t.at, t.body)
	}
	if err := q.write(buf.Bytes()); err != nil {
		return err
	}
	for _, d := range done {
		d()
	}
	return q.trim()
}

// queuedTrace is a trace read from a log or file to adopt.
type queuedTrace struct {
	id, parent string
	at         int64
	body       []byte
}

// adoptLog reads the log of instance inst when its process ended. cleanup
// deletes the log and releases it. A log still locked is left alone.
func (q *Queue) adoptLog(inst string) (traces []queuedTrace, cleanup func(), err error) {
	base := filepath.Join(q.dir, inst)
	unlock, err := filelock.TryLock(base + ".lock")
	if errors.Is(err, filelock.ErrLocked) {
		return nil, func() {}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	cleanup = func() {
		_ = os.Remove(base + ".log")
		unlock() // first: Windows cannot delete an open file
		_ = os.Remove(base + ".lock")
	}
	f, err := os.Open(base + ".log")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, cleanup, nil
	}
	if err != nil {
		unlock()
		return nil, nil, err
	}
	defer f.Close()
	traces, bad, err := readLog(f)
	if err != nil {
		unlock()
		return nil, nil, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	q.dropped += int64(bad)
	return traces, cleanup, nil
}

// readLog returns the traces a log still holds, in log order, and the number
// of lines that do not decode (a line cut short by a crash).
func readLog(r io.Reader) ([]queuedTrace, int, error) {
	var traces []queuedTrace
	index := map[string]int{}
	removed := map[string]bool{}
	bad := 0
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if !parseLogLine(line, &traces, index, removed) {
				bad++
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, err
		}
	}
	live := traces[:0]
	for _, t := range traces {
		if !removed[t.id] {
			live = append(live, t)
		}
	}
	return live, bad, nil
}

// parseLogLine applies one log line; it reports false for a line that does
// not decode.
func parseLogLine(line []byte, traces *[]queuedTrace, index map[string]int, removed map[string]bool) bool {
	line, complete := bytes.CutSuffix(line, []byte("\n"))
	if !complete {
		return false
	}
	switch {
	case bytes.HasPrefix(line, []byte("- ")):
		removed[string(line[2:])] = true
		return true
	case bytes.HasPrefix(line, []byte("+ ")):
		at, body, ok := bytes.Cut(line[2:], []byte(" "))
		if !ok {
			return false
		}
		ns, err := strconv.ParseInt(string(at), 10, 64)
		var head struct {
			ID     string `json:"trace_id"`
			Parent string `json:"parent_trace_id"`
		}
		if err != nil || json.Unmarshal(body, &head) != nil || head.ID == "" {
			return false
		}
		if _, dup := index[head.ID]; !dup {
			index[head.ID] = len(*traces)
			*traces = append(*traces, queuedTrace{id: head.ID, parent: head.Parent, at: ns, body: body})
		}
		return true
	}
	return false
}

// stage adds the log line of one trace to buf and its entry to the queue;
// the entry's offset assumes buf is written next. Called with q.mu held or
// before the Queue is shared.
func (q *Queue) stage(buf *bytes.Buffer, id, parent string, at int64, body []byte) {
	e := queued{id: id, parent: parent, at: at, n: len(body)}
	buf.WriteString("+ ")
	buf.WriteString(strconv.FormatInt(at, 10))
	buf.WriteByte(' ')
	e.off = q.size + int64(buf.Len())
	buf.Write(body)
	buf.WriteByte('\n')
	q.entries = append(q.entries, e)
	q.live += e.lineLen()
}

// openLog opens a log file, written with raw system calls: a trace is
// appended on every execution's answer path, and os.File's write woke the
// runtime's monitor thread each time (docs/performance.md "pml stdio's
// threads").
func openLog(path string, flag int) (*rawio.File, error) {
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		return nil, err
	}
	return rawio.Raw(f), nil
}

// write appends b to the log. Called with q.mu held.
func (q *Queue) write(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if q.f == nil {
		return errClosed
	}
	n, err := q.f.Write(b)
	q.size += int64(n)
	return err
}

// Push appends t (already sanitized) to the log and returns once the kernel
// has it: a crash of the process loses nothing, only a power cut can lose
// the last traces written. When the queue is full the oldest trace is
// dropped and counted.
func (q *Queue) Push(t Trace) error {
	body, err := t.AppendJSON(nil)
	if err != nil {
		return fmt.Errorf("queue trace: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.f == nil {
		return fmt.Errorf("queue trace %s: %w", t.TraceID, errClosed)
	}
	var buf bytes.Buffer
	q.stage(&buf, t.TraceID, t.ParentTraceID, time.Now().UnixNano(), body)
	if err := q.write(buf.Bytes()); err != nil {
		q.entries = q.entries[:len(q.entries)-1]
		q.live -= int64(buf.Len())
		return fmt.Errorf("queue trace %s: %w", t.TraceID, err)
	}
	if q.held+len(body) <= maxHeld {
		q.entries[len(q.entries)-1].mem = &t
		q.held += len(body)
	}
	return q.trim()
}

// trim drops the oldest entries beyond the bound. Called with q.mu held.
func (q *Queue) trim() error {
	n := len(q.entries) - q.max
	if n <= 0 {
		return nil
	}
	ids := make([]string, n)
	for i, e := range q.entries[:n] {
		ids[i] = e.id
	}
	q.dropped += int64(n)
	return q.removeLocked(ids)
}

// Peek returns up to n traces, oldest first except that a trace whose parent
// is also queued comes right after that parent (a nested capability finishes,
// and is pushed, before the code that called it). A trace this Queue holds
// in memory shares its slices with the queue's copy: callers must not
// change them in place.
func (q *Queue) Peek(n int) ([]Trace, error) {
	out, _, err := q.peek(n)
	return out, err
}

// peek is Peek with, for each trace, the length of its JSON when the queue
// knows it (a trace held in memory is the value whose encoding the log
// holds), else -1.
func (q *Queue) peek(n int) ([]Trace, []int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.f == nil {
		return nil, nil, errClosed
	}
	var out []Trace
	var sizes []int
	for _, e := range parentsFirst(q.entries) {
		if len(out) >= n {
			break
		}
		if e.mem != nil {
			out, sizes = append(out, *e.mem), append(sizes, e.n)
			continue
		}
		body := make([]byte, e.n)
		if _, err := q.f.ReadAt(body, e.off); err != nil {
			return out, sizes, fmt.Errorf("peek trace queue: %w", err)
		}
		var t Trace
		if err := json.Unmarshal(body, &t); err != nil {
			return out, sizes, fmt.Errorf("peek trace queue: trace %s: %w", e.id, err)
		}
		out, sizes = append(out, t), append(sizes, -1)
	}
	return out, sizes, nil
}

// Ack removes the traces with these ids: they were delivered.
func (q *Queue) Ack(ids []string) error { return q.remove(ids, false) }

// Discard removes the traces with these ids and counts them as dropped: the
// gateway rejected them for good.
func (q *Queue) Discard(ids []string) error { return q.remove(ids, true) }

func (q *Queue) remove(ids []string, drop bool) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if drop {
		for _, e := range q.entries {
			if slices.Contains(ids, e.id) {
				q.dropped++
			}
		}
	}
	if err := q.removeLocked(ids); err != nil {
		return fmt.Errorf("remove traces from queue: %w", err)
	}
	return nil
}

// removeLocked logs the removal of the queued traces among ids and compacts
// the log when most of it is removed lines. Called with q.mu held.
func (q *Queue) removeLocked(ids []string) error {
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	var buf bytes.Buffer
	q.entries = slices.DeleteFunc(q.entries, func(e queued) bool {
		if !set[e.id] {
			return false
		}
		buf.WriteString("- " + e.id + "\n")
		q.live -= e.lineLen()
		if e.mem != nil {
			q.held -= e.n
		}
		return true
	})
	if len(q.entries) == 0 && q.f != nil {
		// Nothing queued: start the log over.
		if err := q.f.Truncate(0); err != nil {
			return err
		}
		q.size, q.live, q.held = 0, 0, 0
		return nil
	}
	if err := q.write(buf.Bytes()); err != nil {
		return err
	}
	if q.size > compactMin && q.size > 2*q.live {
		return q.compact()
	}
	return nil
}

// compact rewrites the log with the queued traces only: a new file renamed
// over the log, so a crash leaves one or the other. Called with q.mu held.
func (q *Queue) compact() error {
	var buf bytes.Buffer
	old := q.entries
	q.entries, q.size, q.live = nil, 0, 0
	for _, e := range old {
		body := make([]byte, e.n)
		if _, err := q.f.ReadAt(body, e.off); err != nil {
			return q.keep(old, err)
		}
		q.stage(&buf, e.id, e.parent, e.at, body)
		q.entries[len(q.entries)-1].mem = e.mem
	}
	tmp := q.path(".log.tmp")
	f, err := openLog(tmp, os.O_CREATE|os.O_TRUNC|os.O_RDWR|os.O_APPEND)
	if err != nil {
		return q.keep(old, err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		os.Remove(tmp)
		return q.keep(old, err)
	}
	q.f.Close() // first: Windows cannot rename over an open file
	if err := os.Rename(tmp, q.path(".log")); err != nil {
		f.Close()
		os.Remove(tmp)
		reopened, rerr := openLog(q.path(".log"), os.O_RDWR|os.O_APPEND)
		if rerr != nil {
			q.f = nil // the queue cannot write any more; what is on disk stays for the next process
			q.entries = old
			return fmt.Errorf("compact trace log: %w; reopen: %w", err, rerr)
		}
		q.f = reopened
		return q.keep(old, err)
	}
	q.f, q.size = f, int64(buf.Len())
	return nil
}

// keep restores the entries of the current log after a failed compaction.
func (q *Queue) keep(entries []queued, err error) error {
	q.entries, q.live = entries, 0
	for _, e := range entries {
		q.live += e.lineLen()
	}
	if st, serr := q.f.Stat(); serr == nil {
		q.size = st.Size()
	}
	return fmt.Errorf("compact trace log: %w", err)
}

// Close closes the log and releases it. A log with traces stays for the next
// process to adopt; an empty one is deleted.
func (q *Queue) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	var err error
	if q.f != nil {
		err = q.f.Close()
		if len(q.entries) == 0 {
			_ = os.Remove(q.path(".log"))
		}
		q.f = nil
	}
	if q.unlock != nil {
		q.unlock()
		q.unlock = nil
		if len(q.entries) == 0 {
			_ = os.Remove(q.path(".lock"))
		}
	}
	return err
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

// errCorrupt marks a queued trace that exists but does not decode.
var errCorrupt = errors.New("corrupt queue file")

// isFileTraceName accepts the file names of the first design,
// "<20 digits>-<instance>.json".
func isFileTraceName(name string) bool {
	base, ok := strings.CutSuffix(name, ".json")
	if !ok {
		return false
	}
	num, _, ok := strings.Cut(base, "-")
	if !ok {
		return false
	}
	_, err := strconv.ParseUint(num, 10, 64)
	return err == nil
}

// readFileTrace reads one trace file of the first design; its modification
// time stands for when it was queued.
func readFileTrace(path string) (queuedTrace, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return queuedTrace{}, err
	}
	var head struct {
		ID     string `json:"trace_id"`
		Parent string `json:"parent_trace_id"`
	}
	if err := json.Unmarshal(b, &head); err != nil || head.ID == "" {
		return queuedTrace{}, fmt.Errorf("%w %s: %v", errCorrupt, filepath.Base(path), err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return queuedTrace{}, fmt.Errorf("%w %s: %v", errCorrupt, filepath.Base(path), err)
	}
	at := int64(0)
	if info, err := os.Stat(path); err == nil {
		at = info.ModTime().UnixNano()
	}
	return queuedTrace{id: head.ID, parent: head.Parent, at: at, body: compact.Bytes()}, nil
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
