package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/pml-go/pml/internal/admission"
)

// admissionFlags are pml gateway's admission limits; 0 takes the default
// derived from the machine (docs/limits.md "Admission and overload").
type admissionFlags struct {
	executions, perTenant, running, queue int
	queueWait                             time.Duration
	memoryCeilingMiB                      int64
}

func (f *admissionFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.IntVar(&f.executions, "max-executions", 0, "executions admitted at once, those waiting on a tool included (0: from memory, 64 to 2048)")
	fl.IntVar(&f.perTenant, "max-executions-per-tenant", 0, "executions one org/project may hold at once (0: half of --max-executions)")
	fl.IntVar(&f.running, "max-running", 0, "executions whose code runs at once, each able to fill its sandbox heap (0: 4 per core, bounded by memory)")
	fl.IntVar(&f.queue, "max-queue", 128, "requests waiting for an execution place (0 or less: none)")
	fl.DurationVar(&f.queueWait, "queue-wait", 2*time.Second, "how long a request waits for a place before OVERLOADED")
	fl.Int64Var(&f.memoryCeilingMiB, "memory-ceiling-mb", 0, "resident MiB above which no execution is admitted (0: resident MiB at start plus three quarters of the available memory; -1: none)")
}

func (f *admissionFlags) limits() admission.Limits {
	return admission.Limits{
		MaxExecutions:          f.executions,
		MaxExecutionsPerTenant: f.perTenant,
		MaxRunning:             f.running,
		MaxQueue:               admission.QueueLength(f.queue),
		QueueWait:              f.queueWait,
		MemoryCeiling:          f.memoryCeilingMiB << 20,
	}
}
