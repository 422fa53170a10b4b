package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/tools"
)

// JournalDiverged is the code of a re-run that, at a position the journal
// recorded, calls a different tool or passes different arguments than the
// paused run did: the recorded result would be the answer to another call.
const JournalDiverged pmlerr.Code = "REPLAY_DIVERGED"

// Journal records the tool calls of a run so that, when the run pauses
// mid-way for an approval, the re-run after the approval answers the calls
// that already happened from the record instead of executing them again
// (a write or a shell command must not happen twice).
//
// Calls are keyed by the order the code issued them, not the order they
// complete: the JS engine is single-threaded, so the same code with the same
// results issues the same calls in the same order, Promise.all included.
// The journal is safe for concurrent use.
//
// With the calls it keeps the time and randomness the run read (the
// sandbox's tape, opaque here): the re-run reads them again, in order, so
// that code like `"runs/" + Date.now()` repeats its arguments.
type Journal struct {
	mu      sync.Mutex
	entries map[int]JournalEntry
	// args holds the arguments of each recorded call whose ArgsHash is not
	// taken yet: a run that never pauses never needs it, so it is taken
	// when an entry is read (lookup, Entries), not on every call.
	args map[int]json.RawMessage
	tape json.RawMessage
}

// Values is the time and randomness the paused run read, for the re-run to
// read first (nil: none recorded). It makes the journal a sandbox.Tape.
func (j *Journal) Values() json.RawMessage {
	j.mu.Lock()
	defer j.mu.Unlock()
	return bytes.Clone(j.tape)
}

// Record keeps the time and randomness a run that paused read; it starts
// with what Values gave it, so it replaces that.
func (j *Journal) Record(tape json.RawMessage) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.tape = bytes.Clone(tape)
}

// JournalEntry is one completed call. Exactly one of Result and Err is
// meaningful: Err set means the tool failed and the code saw that error.
type JournalEntry struct {
	Seq      int             `json:"seq"`
	Tool     string          `json:"tool"`
	ArgsHash string          `json:"args_hash"`
	Result   json.RawMessage `json:"result,omitempty"`
	Err      *ErrorRecord    `json:"error,omitempty"`
}

// ErrorRecord is a tool error as the code saw it, enough to raise it again.
type ErrorRecord struct {
	Code    pmlerr.Code    `json:"code,omitempty"` // empty: the error carried no wire code
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// NewJournal returns an empty journal.
func NewJournal() *Journal {
	return &Journal{entries: map[int]JournalEntry{}, args: map[int]json.RawMessage{}}
}

// Len is the number of recorded calls.
func (j *Journal) Len() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.entries)
}

// Entries returns the recorded calls in issue order (for traces and debugging).
func (j *Journal) Entries() []JournalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	for seq := range j.args {
		j.hashed(seq)
	}
	out := slices.Collect(maps.Values(j.entries))
	slices.SortFunc(out, func(a, b JournalEntry) int { return a.Seq - b.Seq })
	return out
}

// Wrap returns the CallFunc for one run of the code. Each call's position is
// tools.CallSeq(ctx) (stamped by the sandbox), else the order in which calls
// reach this CallFunc. At a recorded position the call is answered from the
// journal when its tool and ArgsHash match, and fails with JournalDiverged
// when they do not; next is not called either way. At a new position, next
// runs and its outcome is recorded, tool errors included, so a caught error
// replays as the same error. Two outcomes are not recorded: errors for which
// isHalt (may be nil) reports true, which are the pause itself, and errors
// returned after ctx ended, because a cancelled call may or may not have
// happened and must run again.
//
// Call Wrap once per run: the fallback numbering starts at 0 for each.
func (j *Journal) Wrap(next tools.CallFunc, isHalt func(error) bool) tools.CallFunc {
	var issued atomic.Int64
	return func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		seq, ok := tools.CallSeq(ctx)
		if !ok {
			seq = int(issued.Add(1) - 1)
		}
		if e, ok := j.lookup(seq); ok {
			if hash := ArgsHash(args); e.Tool != tool || e.ArgsHash != hash {
				return nil, diverged(e, tool, hash)
			}
			return e.replay()
		}
		res, err := next(ctx, tool, args)
		if err != nil && ((isHalt != nil && isHalt(err)) || ctx.Err() != nil) {
			return res, err
		}
		j.record(seq, tool, args, res, err)
		return res, err
	}
}

func (j *Journal) lookup(seq int) (JournalEntry, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.entries[seq]; !ok {
		return JournalEntry{}, false
	}
	return j.hashed(seq), true
}

// hashed is the entry at seq with its ArgsHash taken. j.mu must be held.
func (j *Journal) hashed(seq int) JournalEntry {
	e := j.entries[seq]
	if args, ok := j.args[seq]; ok {
		e.ArgsHash = ArgsHash(args)
		j.entries[seq] = e
		delete(j.args, seq)
	}
	return e
}

func (j *Journal) record(seq int, tool string, args, res json.RawMessage, err error) {
	e := JournalEntry{Seq: seq, Tool: tool}
	if err != nil {
		e.Err = errorRecord(err)
	} else {
		e.Result = bytes.Clone(res)
	}
	args = bytes.Clone(args)
	j.mu.Lock()
	defer j.mu.Unlock()
	j.entries[seq] = e
	j.args[seq] = args
}

func errorRecord(err error) *ErrorRecord {
	if pe, ok := pmlerr.As(err); ok {
		return &ErrorRecord{Code: pe.Code, Message: pe.Message, Details: maps.Clone(pe.Details)}
	}
	return &ErrorRecord{Message: err.Error()}
}

func (e JournalEntry) replay() (json.RawMessage, error) {
	if e.Err == nil {
		return bytes.Clone(e.Result), nil
	}
	if e.Err.Code == "" {
		return nil, errors.New(e.Err.Message)
	}
	return nil, &pmlerr.Error{Code: e.Err.Code, Message: e.Err.Message, Details: maps.Clone(e.Err.Details)}
}

func diverged(want JournalEntry, tool, hash string) *pmlerr.Error {
	what := "tool " + tool + " instead of " + want.Tool
	if want.Tool == tool {
		what = tool + " with different arguments (args hash " + short(hash) + ", recorded " + short(want.ArgsHash) + ")"
	}
	return pmlerr.New(JournalDiverged,
		"cannot resume: the call at position %d (0-based) of this run is %s; the paused run's calls must repeat in the same order, "+
			"so tool arguments may depend on the code, its arguments, earlier results, the clock and Math.random, and nothing else", want.Seq, what).
		With("seq", want.Seq).
		With("expected_tool", want.Tool).With("got_tool", tool).
		With("expected_args_hash", want.ArgsHash).With("got_args_hash", hash)
}

func short(h string) string { return h[:min(12, len(h))] }
