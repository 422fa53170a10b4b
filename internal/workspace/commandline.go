package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
)

// CommandLine is what `pml exec` was given that its answer speaks of.
type CommandLine struct {
	Timeout time.Duration // --timeout; 0: not given
}

// configState is where the workspace's .pml.json is and whether it exists.
func (p *Workspace) configState() approval.ConfigState {
	path := filepath.Join(p.ws, ConfigFile)
	_, err := os.Stat(path)
	return approval.ConfigState{Path: path, Exists: !errors.Is(err, os.ErrNotExist)}
}

// CommandLineAnswer is ans as `pml exec` shows it, in the terms of a person
// at the command line rather than of an AI client: an approval_required
// says to rerun with --approve or to allow the tools in .pml.json, naming
// them (approval.CommandLineDescription), not to answer with
// continue_workflow; an EXECUTION_TIMEOUT names the flag or setting behind
// the limit that ended the run (docs/limits.md), not the request options.
// Other answers are returned as they are.
func (p *Workspace) CommandLineAnswer(ans wire.Answer, c CommandLine) wire.Answer {
	switch {
	case ans.Status == wire.StatusApprovalRequired:
		if items := answerItems(ans); len(items) > 0 {
			ans.Description = approval.CommandLineDescription(items, p.configState())
		}
	case ans.ErrorCode == pmlerr.ExecutionTimeout:
		if msg := timeoutMessage(ans.Details, c); msg != "" {
			ans.Error = msg
		}
	}
	return ans
}

// timeoutMessage says which limit ended a run, from the "limit" and
// "limit_ms" details of its EXECUTION_TIMEOUT; "" when they are absent.
func timeoutMessage(details map[string]any, c CommandLine) string {
	var ms int64
	switch v := details["limit_ms"].(type) {
	case int64:
		ms = v
	case float64: // decoded from a gateway's JSON answer
		ms = int64(v)
	default:
		return ""
	}
	limit := (time.Duration(ms) * time.Millisecond).String()
	switch details["limit"] {
	case "timeout":
		if c.Timeout > 0 && c.Timeout.Milliseconds() == ms {
			return fmt.Sprintf("execution timed out: it ran past --timeout %s, the wall-clock limit of this run", limit)
		}
		return fmt.Sprintf("execution timed out: it ran past its wall-clock limit of %s, the configured one (PML_TIMEOUT_MS, or the gateway's --timeout; --timeout can only lower it)", limit)
	case "cpu_budget":
		return fmt.Sprintf("the code used up its CPU budget of %s (CPU time running JS), the configured one (PML_CPU_BUDGET_MS, or the gateway's --cpu-budget)", limit)
	}
	return ""
}
