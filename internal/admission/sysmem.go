package admission

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/pml-go/pml/internal/rawio"
)

// availableMemory is the memory this process may still take: the kernel's
// MemAvailable, or less when a cgroup (a container's memory limit) allows
// less. 0 when neither can be read.
func availableMemory() int64 {
	avail := memInfoAvailable()
	if limit, used, ok := cgroupMemory(); ok && (avail == 0 || limit-used < avail) {
		avail = max(limit-used, 0)
	}
	return avail
}

// memInfoAvailable reads MemAvailable from /proc/meminfo, in bytes.
func memInfoAvailable() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		value, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "kB")), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

// cgroupMemory reads the memory limit and usage of this process's cgroup
// (v2, else v1). ok is false without a limit.
func cgroupMemory() (limit, used int64, ok bool) {
	for _, files := range [][2]string{
		{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
		{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"},
	} {
		limit, okLimit := readInt(files[0])
		// v1 reports "no limit" as a huge number rather than "max".
		if !okLimit || limit <= 0 || limit >= 1<<60 {
			continue
		}
		used, _ = readInt(files[1])
		return limit, used, true
	}
	return 0, 0, false
}

func readInt(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	return n, err == nil
}

// residentBytes is this process's resident memory, from /proc/self/statm;
// 0 when it cannot be read. The file stays open and each read is one raw
// pread at its start, which makes the kernel write it anew: opening,
// stating, reading and closing it took five system calls, each waking the
// runtime's monitor thread, on every tenth execution of pml stdio's
// benchmark (docs/performance.md "The trace after the answer").
func residentBytes() int64 {
	f := statm()
	if f == nil {
		return 0
	}
	var buf [128]byte
	n, err := rawio.ReadAt(f, buf[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0
	}
	fields := bytes.Fields(buf[:n])
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(string(fields[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// statm is /proc/self/statm, opened once for the life of the process (it
// describes the process, whichever Controller asks); nil where there is
// none.
var statm = sync.OnceValue(func() *os.File {
	f, err := os.Open("/proc/self/statm")
	if err != nil {
		return nil
	}
	return f
})
