package local

import (
	"fmt"
	"path"
	"strings"
)

// Bounds of a search_files pattern. Matching costs at most one segment
// match per pattern segment per entry visited, so these and the entry cap
// bound a search's work whatever the pattern.
const (
	maxGlobBytes    = 1024
	maxGlobSegments = 32 // after runs of ** are collapsed; fits the state bit set
)

// glob is a compiled search pattern: slash-separated segments where "**"
// spans any number of path segments (runs of ** are collapsed into one, which
// matches the same paths). A pattern without '/' matches an entry's name at
// any depth, which is the pattern "**/" + pattern.
//
// Matching runs the segments as a nondeterministic automaton over the path's
// segments, one step per directory level, so it is linear in the path's
// depth and never backtracks (the recursive matcher it replaces was
// exponential in the number of ** segments).
type glob struct {
	segs []string
}

// globState is the set of pattern positions reached so far: bit i set means
// the first i segments match the path walked so far.
type globState uint64

func compileGlob(pattern string) (glob, error) {
	if len(pattern) > maxGlobBytes {
		return glob{}, fmt.Errorf("the pattern is %d bytes; at most %d", len(pattern), maxGlobBytes)
	}
	var raw []string
	if strings.Contains(pattern, "/") {
		raw = strings.Split(strings.Trim(pattern, "/"), "/")
	} else {
		raw = []string{"**", pattern}
	}
	var segs []string
	for _, s := range raw {
		if s == "**" && len(segs) > 0 && segs[len(segs)-1] == "**" {
			continue
		}
		// path.Match reports a malformed segment only when it reaches the
		// bad part; matching the empty name reaches all of it.
		if _, err := path.Match(s, ""); err != nil {
			return glob{}, err
		}
		segs = append(segs, s)
	}
	if len(segs) > maxGlobSegments {
		return glob{}, fmt.Errorf("the pattern has %d segments (runs of ** count once); at most %d", len(segs), maxGlobSegments)
	}
	return glob{segs: segs}, nil
}

// start is the state before any path segment: nothing matched yet.
func (g glob) start() globState { return g.closure(1) }

// closure adds the positions reachable without consuming a segment: past a
// "**", which may match no segment at all.
func (g glob) closure(st globState) globState {
	for i, s := range g.segs {
		if st&(1<<i) != 0 && s == "**" {
			st |= 1 << (i + 1)
		}
	}
	return st
}

// step consumes one path segment.
func (g glob) step(st globState, name string) globState {
	var next globState
	for i, s := range g.segs {
		if st&(1<<i) == 0 {
			continue
		}
		if s == "**" {
			next |= 1 << i // ** swallows name and may swallow more
			continue
		}
		if ok, _ := path.Match(s, name); ok {
			next |= 1 << (i + 1)
		}
	}
	return g.closure(next)
}

// matched reports whether the path walked so far matches the whole pattern.
func (g glob) matched(st globState) bool { return st&(1<<len(g.segs)) != 0 }

// alive reports whether some path below could still match.
func (g glob) alive(st globState) bool { return st&^(1<<len(g.segs)) != 0 }
