package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
)

// maxSearchEntries bounds the directory entries one search_files call reads,
// so a search of a huge tree ends with a clear error rather than running
// until the call's timeout.
const maxSearchEntries = 200_000

// readDirBatch is how many entries are read from a directory at a time, so a
// directory with millions of entries is never held in memory at once.
const readDirBatch = 256

// errEnoughResults stops a walk that has max_results matches.
var errEnoughResults = errors.New("enough results")

// errTooManyEntries ends a walk past its entry cap.
var errTooManyEntries = errors.New("the search read too many entries")

// searchTree returns the paths below base (slash-separated, relative to
// fsys) whose path below base matches g, at most limit of them, sorted.
// Directories are read one at a time and only while some path below them can
// still match; symlinked directories are not descended; an unreadable
// directory below base is skipped. ctx is checked before every entry.
func searchTree(ctx context.Context, fsys fs.FS, base string, g glob, limit, maxEntries int) ([]string, error) {
	type pending struct {
		dir string
		st  globState
	}
	s := searcher{ctx: ctx, fsys: fsys, g: g, limit: limit, maxEntries: maxEntries, out: []string{}}
	stack := []pending{{base, g.start()}}
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		err := s.readDir(top.dir, top.st, func(dir string, st globState) {
			stack = append(stack, pending{dir, st})
		})
		switch {
		case errors.Is(err, errEnoughResults):
			stack = nil
		case err != nil && (top.dir == base || errors.Is(err, errTooManyEntries) || ctx.Err() != nil):
			return nil, err
		}
		// Any other error is a directory below base that cannot be read: it
		// is skipped.
	}
	slices.Sort(s.out)
	return s.out, nil
}

type searcher struct {
	ctx               context.Context
	fsys              fs.FS
	g                 glob
	limit, maxEntries int
	visited           int
	out               []string
}

// readDir matches the entries of dir, reached in state st, and hands each
// subdirectory worth descending to descend.
func (s *searcher) readDir(dir string, st globState, descend func(dir string, st globState)) error {
	f, err := s.fsys.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	rd, ok := f.(fs.ReadDirFile)
	if !ok {
		return &fs.PathError{Op: "readdir", Path: dir, Err: errors.ErrUnsupported}
	}
	for {
		batch, err := rd.ReadDir(readDirBatch)
		for _, e := range batch {
			if err := s.ctx.Err(); err != nil {
				return err
			}
			if s.visited++; s.visited > s.maxEntries {
				return fmt.Errorf("%w: %d without finishing; search a smaller directory or use a more specific pattern", errTooManyEntries, s.maxEntries)
			}
			next := s.g.step(st, e.Name())
			p := path.Join(dir, e.Name())
			if s.g.matched(next) {
				s.out = append(s.out, p)
				if len(s.out) >= s.limit {
					return errEnoughResults
				}
			}
			if e.IsDir() && s.g.alive(next) {
				descend(p, next)
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
	}
}
