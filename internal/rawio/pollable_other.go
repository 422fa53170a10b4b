//go:build !unix

package rawio

import "os"

// Pollable returns f: outside Unix the runtime waits on f as it is.
func Pollable(f *os.File) *os.File { return f }
