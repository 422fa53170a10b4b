//go:build unix

package local

import (
	"context"
	"os/exec"
)

// shellName is the shell:exec interpreter as its description names it.
const shellName = "/bin/sh -c"

func shellCommand(ctx context.Context, command string) *exec.Cmd {
	return exec.CommandContext(ctx, "/bin/sh", "-c", command)
}
