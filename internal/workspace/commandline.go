package workspace

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/wire"
)

// configState is where the workspace's .pml.json is and whether it exists.
func (p *Workspace) configState() approval.ConfigState {
	path := filepath.Join(p.ws, ConfigFile)
	_, err := os.Stat(path)
	return approval.ConfigState{Path: path, Exists: !errors.Is(err, os.ErrNotExist)}
}

// CommandLineAnswer is ans as `pml exec` shows it: an approval_required
// says what to do at the command line (rerun with --approve, or allow the
// tools in .pml.json, naming them) instead of how an AI client answers
// with continue_workflow (approval.CommandLineDescription). Other answers
// are returned as they are.
func (p *Workspace) CommandLineAnswer(ans wire.Answer) wire.Answer {
	if ans.Status != wire.StatusApprovalRequired {
		return ans
	}
	if items := answerItems(ans); len(items) > 0 {
		ans.Description = approval.CommandLineDescription(items, p.configState())
	}
	return ans
}
