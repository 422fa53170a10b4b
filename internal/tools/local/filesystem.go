package local

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/tools"
)

const pathDoc = "A path relative to the workspace, or absolute inside it."

func info(id, description, schema string) tools.Info {
	return tools.Info{ID: id, Description: description, InputSchema: []byte(schema)}
}

func (w *workspace) filesystemTools() []tools.Func {
	return []tools.Func{
		tools.Typed(info("filesystem:read_file",
			"Read a file of the workspace and return its content as text (or base64 for binary files).",
			`{"type":"object","properties":{
				"path":{"type":"string","description":"`+pathDoc+`"},
				"encoding":{"enum":["utf8","base64"],"default":"utf8","description":"utf8 fails on binary content; base64 returns any bytes."}
			},"required":["path"],"additionalProperties":false}`),
			w.readFile),
		tools.Typed(info("filesystem:write_file",
			"Write text (or base64-decoded bytes) to a file of the workspace, creating parent directories and replacing existing content (or appending). Returns {path, bytes}.",
			`{"type":"object","properties":{
				"path":{"type":"string","description":"`+pathDoc+`"},
				"content":{"type":"string"},
				"encoding":{"enum":["utf8","base64"],"default":"utf8"},
				"append":{"type":"boolean","default":false}
			},"required":["path","content"],"additionalProperties":false}`),
			w.writeFile),
		tools.Typed(info("filesystem:list_directory",
			"List a directory of the workspace: [{name, type: \"file\"|\"directory\"|\"symlink\"|\"other\", size}], sorted by name.",
			`{"type":"object","properties":{
				"path":{"type":"string","default":".","description":"`+pathDoc+`"}
			},"additionalProperties":false}`),
			w.listDirectory),
		tools.Typed(info("filesystem:stat",
			"Describe a file or directory of the workspace: {name, path, type, size, modified (RFC 3339), mode (octal permissions)}. A symlink is reported as type \"symlink\" with the size and mode of its target.",
			`{"type":"object","properties":{
				"path":{"type":"string","description":"`+pathDoc+`"}
			},"required":["path"],"additionalProperties":false}`),
			w.stat),
		tools.Typed(info("filesystem:make_directory",
			"Create a directory of the workspace and any missing parents (mkdir -p). Returns {path, created}.",
			`{"type":"object","properties":{
				"path":{"type":"string","description":"`+pathDoc+`"}
			},"required":["path"],"additionalProperties":false}`),
			w.makeDirectory),
		tools.Typed(info("filesystem:move_file",
			"Move or rename a file or directory inside the workspace, creating the destination's parent directories. Fails if the destination exists unless overwrite is true (a directory is never overwritten). Returns {source, destination}.",
			`{"type":"object","properties":{
				"source":{"type":"string","description":"`+pathDoc+`"},
				"destination":{"type":"string","description":"`+pathDoc+`"},
				"overwrite":{"type":"boolean","default":false}
			},"required":["source","destination"],"additionalProperties":false}`),
			w.moveFile),
		tools.Typed(info("filesystem:search_files",
			"Find files and directories under a directory of the workspace whose name matches a glob (\"*.go\", \"test_?.py\"); a pattern with '/' matches the path below the directory, and ** spans directories (\"src/**/*.ts\"). Returns workspace-relative paths, sorted. Symlinked directories are not descended.",
			`{"type":"object","properties":{
				"path":{"type":"string","default":".","description":"The directory to search. `+pathDoc+`"},
				"pattern":{"type":"string","minLength":1},
				"max_results":{"type":"integer","minimum":1,"maximum":100000,"default":1000}
			},"required":["pattern"],"additionalProperties":false}`),
			w.searchFiles),
	}
}

// withRoot resolves p and runs op on an os.Root of the workspace.
func (w *workspace) withRoot(p string, op func(r *os.Root, pl place) (any, error)) (any, error) {
	pl, err := w.resolve(p)
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(pl.root)
	if err != nil {
		return nil, pathError(p, err)
	}
	defer r.Close()
	return op(r, pl)
}

func (w *workspace) readFile(ctx context.Context, a struct {
	Path     string `json:"path"`
	Encoding string `json:"encoding"`
}) (any, error) {
	return w.withRoot(a.Path, func(r *os.Root, pl place) (any, error) {
		if err := checkSecretRead(ctx, a.Path, pl); err != nil {
			return nil, err
		}
		f, err := r.Open(pl.rel)
		if err != nil {
			return nil, pathError(a.Path, err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return nil, pathError(a.Path, err)
		}
		if fi.IsDir() {
			return nil, pmlerr.New(pmlerr.ToolError, "%s is a directory; use filesystem:list_directory", a.Path)
		}
		if err := checkLinks(a.Path, f, fi); err != nil {
			return nil, err
		}
		data, err := io.ReadAll(io.LimitReader(f, w.maxRead+1))
		if err != nil {
			return nil, pathError(a.Path, err)
		}
		if int64(len(data)) > w.maxRead {
			return nil, pmlerr.New(pmlerr.ToolError, "%s is larger than the %d bytes read_file returns", a.Path, w.maxRead)
		}
		if a.Encoding == "base64" {
			return base64.StdEncoding.EncodeToString(data), nil
		}
		if !utf8.Valid(data) {
			return nil, pmlerr.New(pmlerr.ToolError, `%s is not UTF-8 text; read it with encoding: "base64"`, a.Path)
		}
		return string(data), nil
	})
}

func (w *workspace) writeFile(ctx context.Context, a struct {
	Path     string `json:"path"`
	Content  string `json:"content"`
	Encoding string `json:"encoding"`
	Append   bool   `json:"append"`
}) (any, error) {
	data := []byte(a.Content)
	if a.Encoding == "base64" {
		var err error
		if data, err = base64.StdEncoding.DecodeString(a.Content); err != nil {
			return nil, pmlerr.New(pmlerr.ToolError, "content is not valid base64: %v", err)
		}
	}
	return w.withRoot(a.Path, func(r *os.Root, pl place) (any, error) {
		if pl.rel == "." {
			return nil, pmlerr.New(pmlerr.ToolError, "%s is the workspace directory, not a file", a.Path)
		}
		if err := checkWrite(ctx, a.Path, pl); err != nil {
			return nil, err
		}
		if err := r.MkdirAll(filepath.Dir(pl.rel), 0o755); err != nil {
			return nil, pathError(a.Path, err)
		}
		// Opened without O_TRUNC: the link count is checked on the opened
		// file before its content changes.
		flags := os.O_WRONLY | os.O_CREATE
		if a.Append {
			flags |= os.O_APPEND
		}
		f, err := r.OpenFile(pl.rel, flags, 0o644)
		if err != nil {
			return nil, pathError(a.Path, err)
		}
		if err := prepareWrite(a.Path, f, a.Append); err != nil {
			f.Close()
			return nil, err
		}
		n, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, pathError(a.Path, werr)
		}
		return map[string]any{"path": pl.real, "bytes": n}, nil
	})
}

// entryType names a file mode the way the tools report it.
func entryType(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "directory"
	case m.IsRegular():
		return "file"
	}
	return "other"
}

type dirEntry struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size int64  `json:"size"`
}

func (w *workspace) listDirectory(ctx context.Context, a struct {
	Path string `json:"path"`
}) (any, error) {
	return w.withRoot(a.Path, func(r *os.Root, pl place) (any, error) {
		f, err := r.Open(pl.rel)
		if err != nil {
			return nil, pathError(a.Path, err)
		}
		defer f.Close()
		entries, err := f.ReadDir(-1)
		if err != nil {
			return nil, pathError(a.Path, err)
		}
		out := make([]dirEntry, 0, len(entries))
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			d := dirEntry{Name: e.Name(), Type: entryType(e.Type())}
			if fi, err := e.Info(); err == nil && d.Type != "directory" {
				d.Size = fi.Size()
			}
			out = append(out, d)
		}
		slices.SortFunc(out, func(x, y dirEntry) int { return strings.Compare(x.Name, y.Name) })
		return out, nil
	})
}

func (w *workspace) stat(_ context.Context, a struct {
	Path string `json:"path"`
}) (any, error) {
	return w.withRoot(a.Path, func(r *os.Root, pl place) (any, error) {
		fi, err := r.Stat(pl.rel)
		if err != nil {
			return nil, pathError(a.Path, err)
		}
		typ := entryType(fi.Mode())
		if li, err := r.Lstat(pl.linkRel); err == nil && li.Mode()&fs.ModeSymlink != 0 {
			typ = "symlink"
		}
		return map[string]any{
			"name":     filepath.Base(filepath.Join(pl.root, pl.linkRel)),
			"path":     pl.real,
			"type":     typ,
			"size":     fi.Size(),
			"modified": fi.ModTime().UTC().Format(time.RFC3339),
			"mode":     fmt.Sprintf("%04o", fi.Mode().Perm()),
		}, nil
	})
}

func (w *workspace) makeDirectory(ctx context.Context, a struct {
	Path string `json:"path"`
}) (any, error) {
	return w.withRoot(a.Path, func(r *os.Root, pl place) (any, error) {
		if err := checkWrite(ctx, a.Path, pl); err != nil {
			return nil, err
		}
		if err := r.MkdirAll(pl.rel, 0o755); err != nil {
			return nil, pathError(a.Path, err)
		}
		return map[string]any{"path": pl.real, "created": !pl.exists}, nil
	})
}

func (w *workspace) moveFile(ctx context.Context, a struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Overwrite   bool   `json:"overwrite"`
}) (any, error) {
	src, err := w.resolve(a.Source)
	if err != nil {
		return nil, err
	}
	dst, err := w.resolve(a.Destination)
	if err != nil {
		return nil, err
	}
	if src.linkRel == "." || dst.linkRel == "." {
		return nil, pmlerr.New(pmlerr.ToolError, "the workspace directory itself cannot be moved or replaced")
	}
	// Moving a file changes both names: a protected one cannot be moved
	// away (or replaced), and a secret renamed to notes.txt would be read
	// without asking.
	for _, c := range []struct {
		arg string
		pl  place
	}{{a.Source, src}, {a.Destination, dst}} {
		if err := checkWrite(ctx, c.arg, c.pl); err != nil {
			return nil, err
		}
	}
	if err := checkSecretRead(ctx, a.Source, src); err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(src.root)
	if err != nil {
		return nil, pathError(a.Source, err)
	}
	defer r.Close()
	// The link itself moves, not its target: rename(2) semantics.
	if _, err := r.Lstat(src.linkRel); err != nil {
		return nil, pathError(a.Source, err)
	}
	if di, err := r.Lstat(dst.linkRel); err == nil {
		switch {
		case di.IsDir():
			return nil, pmlerr.New(pmlerr.ToolError, "destination %s is an existing directory; give the full target path", a.Destination)
		case !a.Overwrite:
			return nil, pmlerr.New(pmlerr.ToolError, "destination %s exists; pass overwrite: true to replace it", a.Destination)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, pathError(a.Destination, err)
	}
	if err := r.MkdirAll(filepath.Dir(dst.linkRel), 0o755); err != nil {
		return nil, pathError(a.Destination, err)
	}
	if err := r.Rename(src.linkRel, dst.linkRel); err != nil {
		return nil, pathError(a.Source, err)
	}
	return map[string]any{
		"source":      filepath.Join(src.root, src.linkRel),
		"destination": filepath.Join(dst.root, dst.linkRel),
	}, nil
}

func (w *workspace) searchFiles(ctx context.Context, a struct {
	Path       string `json:"path"`
	Pattern    string `json:"pattern"`
	MaxResults int    `json:"max_results"`
}) (any, error) {
	g, err := compileGlob(a.Pattern)
	if err != nil {
		if len(a.Pattern) > maxGlobBytes {
			return nil, pmlerr.New(pmlerr.ToolError, "the pattern is not a valid glob: %v", err)
		}
		return nil, pmlerr.New(pmlerr.ToolError, "pattern %q is not a valid glob: %v", a.Pattern, err)
	}
	limit := a.MaxResults
	if limit <= 0 {
		limit = 1000
	}
	return w.withRoot(a.Path, func(r *os.Root, pl place) (any, error) {
		out, err := searchTree(ctx, r.FS(), filepath.ToSlash(pl.rel), g, limit, maxSearchEntries)
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			return nil, pathError(a.Path, err)
		}
		return out, nil
	})
}

// prepareWrite checks an opened file's link count and, unless appending,
// empties it.
func prepareWrite(arg string, f *os.File, appending bool) error {
	fi, err := f.Stat()
	if err != nil {
		return pathError(arg, err)
	}
	if err := checkLinks(arg, f, fi); err != nil {
		return err
	}
	if !appending {
		if err := f.Truncate(0); err != nil {
			return pathError(arg, err)
		}
	}
	return nil
}
