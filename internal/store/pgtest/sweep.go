package pgtest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// dirPrefix names cluster directories: <tmp>/pml-pgtest-<pid>-<random>.
const dirPrefix = "pml-pgtest-"

// sweepStale deletes the directories of clusters whose test process is gone.
// The shared cluster's directory cannot be deleted by its own process (no
// hook runs at exit), so each new cluster cleans up after earlier runs.
func sweepStale() {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range matches {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(dir), dirPrefix), "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 {
			continue
		}
		if processGone(pid) {
			_ = os.RemoveAll(dir) // best effort: another process may be sweeping too
		}
	}
}
