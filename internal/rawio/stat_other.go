//go:build !linux

package rawio

import (
	"os"
	"time"
)

// Stater stats the files of one directory; outside Linux with os.Stat.
type Stater struct{}

// NewStater returns a Stater for the files under dir.
func NewStater(string) *Stater { return &Stater{} }

// Stat returns path's size and modification time, as os.Stat does.
func (*Stater) Stat(path string) (int64, time.Time, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, time.Time{}, err
	}
	return fi.Size(), fi.ModTime(), nil
}
