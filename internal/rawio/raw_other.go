//go:build !linux

package rawio

import "os"

// File is a pipe or a file; outside Linux its reads and writes are the
// os.File's own.
type File struct{ *os.File }

// Raw returns f as it is: outside Linux its reads and writes are f's own.
func Raw(f *os.File) *File { return &File{File: f} }

// ReadAt is f.ReadAt outside Linux.
func ReadAt(f *os.File, p []byte, off int64) (int, error) { return f.ReadAt(p, off) }
