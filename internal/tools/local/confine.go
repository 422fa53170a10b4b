package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pml-go/pml/internal/pmlerr"
)

// maxSymlinkHops matches Linux's limit on symlinks followed in one lookup.
const maxSymlinkHops = 40

// place is a tool path checked against the workspace. Operations go through
// an os.Root opened on root with rel or linkRel, so a symlink swapped in after
// the check still cannot lead outside (the kernel-level guard); the check
// itself exists to refuse early with a reason the caller can read.
type place struct {
	root    string // the workspace, symlinks resolved
	real    string // the path with every symlink resolved
	rel     string // real relative to root ("." for the root itself)
	linkRel string // relative path with the parent resolved but not the last component
	lexRel  string // the path as given, cleaned, relative to root (no symlink resolved)
	exists  bool
}

// denied is the PERMISSION_DENIED error for path, with its reason.
func denied(path, format string, args ...any) *pmlerr.Error {
	return pmlerr.New(pmlerr.PermissionDenied, "path %q refused: %s", path, fmt.Sprintf(format, args...)).
		With("path", path)
}

// resolveWorkspace returns the workspace with its own symlinks resolved, so
// "is it inside" compares real paths.
func resolveWorkspace(workspace string) (string, error) {
	root, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", pmlerr.New(pmlerr.ToolError, "workspace %s is not accessible: %v", workspace, err)
	}
	fi, err := os.Stat(root)
	if err != nil || !fi.IsDir() {
		return "", pmlerr.New(pmlerr.ToolError, "workspace %s is not a directory", workspace)
	}
	return root, nil
}

// resolve checks p, relative to the workspace or absolute inside it, and
// returns where it really leads. Refused with PERMISSION_DENIED: NUL bytes,
// absolute paths outside the workspace, ".." climbing out of it, and symlinks
// (anywhere along the path, dangling or not) whose target is outside.
func (w *workspace) resolve(p string) (place, error) {
	if strings.ContainsRune(p, 0) {
		return place{}, denied(p, "it contains a NUL byte")
	}
	root, err := resolveWorkspace(w.dir)
	if err != nil {
		return place{}, err
	}
	rel, err := w.lexicalRel(root, p)
	if err != nil {
		return place{}, err
	}
	var parts []string
	if rel != "." {
		parts = strings.Split(rel, string(filepath.Separator))
	}
	real, exists, err := walk(root, parts)
	if err != nil {
		return place{}, pathError(p, err)
	}
	if !within(root, real) {
		return place{}, denied(p, "it resolves through a symlink to %s, outside the workspace %s", real, root)
	}
	pl := place{root: root, real: real, exists: exists, linkRel: rel, lexRel: rel}
	pl.rel, _ = filepath.Rel(root, real)
	if len(parts) > 0 {
		parent, _, err := walk(root, parts[:len(parts)-1])
		if err != nil {
			return place{}, pathError(p, err)
		}
		if !within(root, parent) {
			return place{}, denied(p, "its directory resolves through a symlink to %s, outside the workspace %s", parent, root)
		}
		pr, _ := filepath.Rel(root, parent)
		pl.linkRel = filepath.Join(pr, parts[len(parts)-1])
	}
	return pl, nil
}

// lexicalRel turns p into a clean path relative to root, refusing absolute
// paths outside the workspace and ".." escapes before touching the disk.
func (w *workspace) lexicalRel(root, p string) (string, error) {
	if p == "" {
		p = "."
	}
	if !filepath.IsAbs(p) {
		c := filepath.Clean(p)
		if c == ".." || strings.HasPrefix(c, ".."+string(filepath.Separator)) {
			return "", denied(p, "'..' climbs out of the workspace %s", root)
		}
		return c, nil
	}
	c := filepath.Clean(p)
	// The caller may spell the workspace as configured (before symlink
	// resolution) or as resolved; both are inside.
	for _, base := range []string{root, w.dir} {
		if within(base, c) {
			rel, _ := filepath.Rel(base, c)
			return rel, nil
		}
	}
	if hasDotDot(p) {
		return "", denied(p, "'..' climbs out of the workspace %s", root)
	}
	return "", denied(p, "absolute path outside the workspace %s", root)
}

func hasDotDot(p string) bool {
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part == ".." {
			return true
		}
	}
	return false
}

// within reports whether p is base or below it; both must be clean.
func within(base, p string) bool {
	return p == base || strings.HasPrefix(p, base+string(filepath.Separator)) || base == string(filepath.Separator)
}

// walk resolves parts from start as the kernel would, following every
// symlink, and stops at the first component that does not exist: the rest is
// appended lexically (and exists is false). Unlike filepath.EvalSymlinks it
// accepts paths about to be created, and follows dangling symlinks to where
// a create would land.
func walk(start string, parts []string) (real string, exists bool, err error) {
	cur := start
	pending := parts
	hops := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(append([]string{next}, pending...)...), false, nil
		}
		if err != nil {
			return "", false, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if !fi.IsDir() && len(pending) > 0 {
				return "", false, &fs.PathError{Op: "lookup", Path: next, Err: errors.New("not a directory")}
			}
			cur = next
			continue
		}
		if hops++; hops > maxSymlinkHops {
			return "", false, &fs.PathError{Op: "lookup", Path: next, Err: errors.New("too many levels of symbolic links")}
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", false, err
		}
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		pending = append(strings.Split(target, string(filepath.Separator)), pending...)
	}
	return cur, true, nil
}

// pathError maps a filesystem error on p to a wire error: escapes caught by
// os.Root become PERMISSION_DENIED, the rest TOOL_ERROR with a plain reason.
func pathError(p string, err error) error {
	switch {
	case err == nil:
		return nil
	case strings.Contains(err.Error(), "path escapes from parent"):
		return denied(p, "it leads outside the workspace")
	case errors.Is(err, fs.ErrNotExist):
		return &pmlerr.Error{Code: pmlerr.ToolError, Message: fmt.Sprintf("%s does not exist", p), Err: err}
	case errors.Is(err, fs.ErrPermission):
		return &pmlerr.Error{Code: pmlerr.ToolError, Message: fmt.Sprintf("%s: the operating system denied access", p), Err: err}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &pmlerr.Error{Code: pmlerr.ToolError, Message: fmt.Sprintf("%s: %v", p, pe.Err), Err: err}
	}
	return &pmlerr.Error{Code: pmlerr.ToolError, Message: fmt.Sprintf("%s: %v", p, err), Err: err}
}
