package local

import (
	"context"
	"os"
	"os/exec"
	"syscall"
)

// shellName is the shell:exec interpreter as its description names it:
// Windows has no /bin/sh, so commands are cmd.exe's (docs/security.md "On
// Windows").
const shellName = "cmd.exe /d /s /c"

// shellCommand runs command with %ComSpec% (cmd.exe). cmd.exe does not parse
// its command line the way Go quotes arguments, so the line is given whole:
// with /s, cmd.exe strips the outer quotes and runs the rest as typed.
func shellCommand(ctx context.Context, command string) *exec.Cmd {
	comspec := os.Getenv("ComSpec")
	if comspec == "" {
		comspec = `C:\Windows\System32\cmd.exe`
	}
	cmd := exec.CommandContext(ctx, comspec)
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: `/d /s /c "` + command + `"`}
	return cmd
}
