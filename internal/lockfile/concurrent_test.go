package lockfile

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
)

// Environment of a re-executed test binary acting as a separate pml process.
const (
	envWorkspace = "LOCKFILE_TEST_WORKSPACE"
	envWriter    = "LOCKFILE_TEST_WRITER"
	envCount     = "LOCKFILE_TEST_COUNT"
)

func TestMain(m *testing.M) {
	if ws := os.Getenv(envWorkspace); ws != "" {
		if err := runWriter(ws, os.Getenv(envWriter), os.Getenv(envCount)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runWriter is a whole process recording count distinct entries.
func runWriter(ws, writer, countStr string) error {
	count, err := strconv.Atoi(countStr)
	if err != nil {
		return err
	}
	l, err := Open(ws, nil)
	if err != nil {
		return err
	}
	for i := range count {
		name, e := workerEntry(writer, i)
		if err := l.Record(name, e); err != nil {
			return fmt.Errorf("writer %s: %w", writer, err)
		}
	}
	return nil
}

// TestConcurrentWriters runs goroutines with their own Lockfile and separate
// processes, all recording distinct entries into one workspace at once;
// every entry must survive.
func TestConcurrentWriters(t *testing.T) {
	const (
		goroutines = 20
		processes  = 4
		perWriter  = 5
	)
	ws := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	errs := make(chan error, goroutines+processes)
	for p := range processes {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(),
			envWorkspace+"="+ws, envWriter+"=proc"+strconv.Itoa(p), envCount+"="+strconv.Itoa(perWriter))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := cmd.Wait(); err != nil {
				errs <- fmt.Errorf("process %d: %v: %s", p, err, out.Bytes())
			}
		})
	}
	for g := range goroutines {
		wg.Go(func() {
			l, err := Open(ws, nil)
			if err != nil {
				errs <- err
				return
			}
			for i := range perWriter {
				name, e := workerEntry("goroutine"+strconv.Itoa(g), i)
				if err := l.Record(name, e); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	got := open(t, ws, nil).Entries()
	if want := (goroutines + processes) * perWriter; len(got) != want {
		t.Errorf("%d entries at the end, want %d", len(got), want)
	}
	for _, writer := range writers("goroutine", goroutines, "proc", processes) {
		for i := range perWriter {
			name, e := workerEntry(writer, i)
			if got[name] != e {
				t.Errorf("entry %s = %+v, want %+v", name, got[name], e)
			}
		}
	}
}

func writers(a string, na int, b string, nb int) []string {
	var out []string
	for i := range na {
		out = append(out, a+strconv.Itoa(i))
	}
	for i := range nb {
		out = append(out, b+strconv.Itoa(i))
	}
	return out
}

// TestSharedLockfile records from many goroutines through one Lockfile.
func TestSharedLockfile(t *testing.T) {
	ws := t.TempDir()
	l := open(t, ws, nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 3 {
				name, e := workerEntry("shared"+strconv.Itoa(g), i)
				if err := l.Record(name, e); err != nil {
					t.Error(err)
				}
				if _, _, err := l.Check(name, e.Integrity); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if n := len(open(t, ws, nil).Entries()); n != 24 {
		t.Errorf("%d entries, want 24", n)
	}
}
