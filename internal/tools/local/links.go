package local

import (
	"io/fs"
	"os"
)

// checkLinks refuses a regular file with more than one hard link. A hard
// link is a second name for the same file, possibly outside the workspace or
// a protected one (a link to ~/.ssh/id_rsa, or to .pml.json): confinement by
// path cannot see where the other names are, so such a file is neither read
// nor written. It runs on the opened file f (fi is its Stat), so the check
// and the use are of the same file.
func checkLinks(arg string, f *os.File, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return nil
	}
	n, err := linkCount(f, fi)
	if err != nil {
		return pathError(arg, err)
	}
	if n <= 1 {
		return nil
	}
	return denied(arg, "it has %d hard links, so it may be the same file as one outside the workspace or one PML protects; "+
		"the filesystem tools neither read nor write such a file (copy it with cp to work on a copy)", n)
}
