// Command pml is the PML gateway and the PML package in one binary; see
// README "Commands". This file and its siblings only wire flags to
// the internal packages.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/pml-go/pml/internal/gcpolicy"
)

func main() {
	gcpolicy.Apply()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCmd().ExecuteContext(ctx); err != nil {
		code, show := exitCode(err)
		if show {
			fmt.Fprintln(os.Stderr, "pml:", err)
		}
		stop()
		os.Exit(code)
	}
}
