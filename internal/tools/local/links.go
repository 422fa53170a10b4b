package local

import (
	"io/fs"
	"syscall"
)

// checkLinks refuses a regular file with more than one hard link. A hard
// link is a second name for the same file, possibly outside the workspace or
// a protected one (a link to ~/.ssh/id_rsa, or to .pml.json): confinement by
// path cannot see where the other names are, so such a file is neither read
// nor written. It runs on the opened file, so the check and the use are of
// the same file.
func checkLinks(arg string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() || st.Nlink <= 1 {
		return nil
	}
	return denied(arg, "it has %d hard links, so it may be the same file as one outside the workspace or one PML protects; "+
		"the filesystem tools neither read nor write such a file (copy it with cp to work on a copy)", uint64(st.Nlink))
}
