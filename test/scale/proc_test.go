//go:build linux && loadtest

package scale_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is USER_HZ, the unit of CPU times in /proc/PID/stat; 100 on
// every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// memory reads the replica's resident set now and at its peak, in KiB.
func (r *replica) memory() (rssKiB, peakKiB int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.cmd.Process.Pid))
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", r.name, err)
	}
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rssKiB = v
		case "VmHWM:":
			peakKiB = v
		}
	}
	return rssKiB, peakKiB, nil
}

// procStat is what the load test reads of /proc/PID/stat.
type procStat struct {
	ppid int
	cpu  time.Duration // user + system
}

func readProcStat(pid int) (procStat, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// The command name (field 2) may hold spaces; the fields after it do not.
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	ppid, _ := strconv.Atoi(f[1])
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return procStat{ppid: ppid, cpu: time.Duration(utime+stime) * clockTick}, nil
}

// processCPU is the CPU time a process has used.
func processCPU(pid int) time.Duration {
	st, err := readProcStat(pid)
	if err != nil {
		return 0
	}
	return st.cpu
}

// selfCPU is the CPU time of this test process: the load generator (MCP
// clients) and the balancer.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// postgresCPU is the CPU time of the PostgreSQL cluster listening on port:
// its postmaster (found by its -p argument) and the backends it forked.
// Backends that exited are not counted; the gateways' pools keep theirs.
func postgresCPU(port int) time.Duration {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	stats := map[int]procStat{}
	postmaster := 0
	want := fmt.Sprintf("\x00-p\x00%d\x00", port)
	for _, dir := range dirs {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil {
			continue
		}
		st, err := readProcStat(pid)
		if err != nil {
			continue
		}
		stats[pid] = st
		if cmdline, err := os.ReadFile(dir + "/cmdline"); err == nil && strings.Contains(string(cmdline), want) {
			postmaster = pid
		}
	}
	if postmaster == 0 {
		return 0
	}
	total := stats[postmaster].cpu
	for _, st := range stats {
		if st.ppid == postmaster {
			total += st.cpu
		}
	}
	return total
}
