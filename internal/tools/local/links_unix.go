//go:build unix

package local

import (
	"io/fs"
	"os"
	"syscall"
)

// linkCount is the number of names of the opened file f (fi is its Stat).
func linkCount(_ *os.File, fi fs.FileInfo) (uint64, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 1, nil
	}
	return uint64(st.Nlink), nil
}
