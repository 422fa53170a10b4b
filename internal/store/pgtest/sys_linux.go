package pgtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// supported: the postmaster's parent-death signal, which keeps a cluster from
// outliving the test binary, is Linux's.
const supported = true

type credential = syscall.Credential

// serverCredential is the "postgres" user when running as root (PostgreSQL
// refuses to run as root), nil otherwise.
func serverCredential() (*credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs a postgres OS user: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("postgres uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("postgres gid %q: %w", u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func sysProcAttr(cred *credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred}
}

func chown(dir string, cred *credential) error {
	if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("chown: %w", err)
	}
	return nil
}

// setDeathSignal: SIGINT, PostgreSQL's fast shutdown, when the thread that
// forked the postmaster ends (see launch).
func setDeathSignal(cmd *exec.Cmd) { cmd.SysProcAttr.Pdeathsig = syscall.SIGINT }

// interrupt asks for PostgreSQL's fast shutdown.
func interrupt(p *os.Process) error { return p.Signal(syscall.SIGINT) }

func processGone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }
