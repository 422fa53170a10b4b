//go:build unix

package testfixture

import (
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on name. flock locks belong to the open
// file, so two opens in one process exclude each other too.
func lockFile(name string) (unlock func(), err error) {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open build lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("take build lock: %w", err)
	}
	return func() { f.Close() }, nil
}
