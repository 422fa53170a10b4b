package proctree

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// sysTree is the Job Object holding the child and, since a job's processes
// put their children in it too, everything the child starts.
type sysTree struct {
	job windows.Handle // 0 until Started succeeds
}

// prepare starts the child suspended: it must be in the job before it can
// start anything, or a quick grandchild would escape it.
func prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED
}

func (t *Tree) started() error {
	job, err := newJob(uint32(t.cmd.Process.Pid))
	if err != nil {
		_ = t.cmd.Process.Kill() // suspended: it has started nothing
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sys.job = job
	if t.killed {
		return errors.Join(errors.New("killed before it started"), windows.TerminateJobObject(job, 1))
	}
	if err := resume(uint32(t.cmd.Process.Pid)); err != nil {
		_ = windows.TerminateJobObject(job, 1)
		return err
	}
	return nil
}

// newJob creates a job that kills its processes when its last handle
// closes (Close, or this process ending, the way Linux's parent-death
// signal ends local MCP servers), and puts the process pid in it.
func newJob(pid uint32) (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("create job object: %w", err)
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return 0, fmt.Errorf("set job object limits: %w", err)
	}
	// The child is not waited for yet, so its pid cannot name another process.
	proc, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, pid)
	if err != nil {
		_ = windows.CloseHandle(job)
		return 0, fmt.Errorf("open process %d: %w", pid, err)
	}
	defer windows.CloseHandle(proc)
	if err := windows.AssignProcessToJobObject(job, proc); err != nil {
		_ = windows.CloseHandle(job)
		return 0, fmt.Errorf("assign process %d to its job object: %w", pid, err)
	}
	return job, nil
}

// resume starts the threads of the suspended process pid (a new process has
// one). Go keeps the thread handle CreateProcess returns to itself, so they
// are found in a snapshot of the system's threads.
func resume(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("snapshot threads: %w", err)
	}
	defer windows.CloseHandle(snap)
	entry := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &entry); err == nil; err = windows.Thread32Next(snap, &entry) {
		if entry.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, entry.ThreadID)
		if err != nil {
			return fmt.Errorf("open thread %d of process %d: %w", entry.ThreadID, pid, err)
		}
		_, err = windows.ResumeThread(th)
		_ = windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("resume thread %d of process %d: %w", entry.ThreadID, pid, err)
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return fmt.Errorf("list threads: %w", err)
	}
	if resumed == 0 {
		return fmt.Errorf("process %d has no thread to resume", pid)
	}
	return nil
}

func (t *Tree) terminate() error { return t.kill() }

func (t *Tree) kill() error {
	t.mu.Lock()
	job := t.sys.job
	t.mu.Unlock()
	if job == 0 {
		// Not in its job yet, so still suspended: it has started nothing.
		return t.cmd.Process.Kill()
	}
	if err := windows.TerminateJobObject(job, 1); err != nil {
		return fmt.Errorf("terminate job object: %w", err)
	}
	return nil
}

func (t *Tree) close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sys.job == 0 {
		return nil
	}
	err := windows.CloseHandle(t.sys.job)
	t.sys.job = 0
	if err != nil {
		return fmt.Errorf("close job object: %w", err)
	}
	return nil
}
