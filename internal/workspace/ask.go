package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/wire"
)

// needApproval is what a call the static plan could not see returns when a
// person must decide first (a dynamic mcp[x] tool, a secret read, a
// changed registry entry). The asking wrapper turns it into a question;
// code never sees it.
type needApproval struct{ item approval.Item }

func (n needApproval) Error() string { return "approval required: " + n.item.Description }

// declined ends a run whose person said no to items in the middle of it.
type declined struct{ items []approval.Item }

func (d declined) Error() string { return "the user declined: " + d.items[0].Description }

func isHalt(err error) bool {
	var h *sandbox.HaltError
	return errors.As(err, &h)
}

// askRetries bounds how often one call may come back needing approval
// after an approval (a tool, then one of its single calls).
const askRetries = 4

type liveRunKey struct{}

// withLiveRun makes lr the run the asking layer parks for calls under ctx.
func withLiveRun(ctx context.Context, lr *liveRun) context.Context {
	return context.WithValue(ctx, liveRunKey{}, lr)
}

// asking is the outermost layer of a local run's mcp bridge (the run's own
// calls and those of capabilities nested in it): a call that needs an
// approval parks the run while the person is asked, and then runs, in
// place, with no re-run of the code.
func asking(next tools.CallFunc) tools.CallFunc {
	return func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		for range askRetries {
			out, err := next(ctx, tool, args)
			var na needApproval
			if !errors.As(err, &na) {
				return out, err
			}
			lr, _ := ctx.Value(liveRunKey{}).(*liveRun)
			if lr == nil {
				return nil, &sandbox.HaltError{Err: pmlerr.New(pmlerr.Internal, "%s needs an approval, and nobody can be asked in this run", tool)}
			}
			if err := lr.ask(ctx, grantsFrom(ctx), na.item); err != nil {
				if ctx.Err() != nil {
					return nil, err // the run is ending: its deadline or cancellation is the answer
				}
				return nil, &sandbox.HaltError{Err: err}
			}
		}
		return nil, &sandbox.HaltError{Err: pmlerr.New(pmlerr.Internal, "%s still needs an approval after %d answers", tool, askRetries)}
	}
}

// declinedAnswer is the answer of a run the person said no to. A rejected
// registry change is an integrity error: the code cannot run as it is.
func declinedAnswer(items []approval.Item, workflowID, reason string) wire.Answer {
	for _, it := range items {
		if it.Type == approval.TypeIntegrity {
			return wire.ErrorAnswer(pmlerr.New(pmlerr.IntegrityError, "rejected a changed registry entry: %s", it.Description), workflowID)
		}
	}
	return wire.Answer{Status: wire.StatusAborted, WorkflowID: workflowID, Reason: reason}
}

// haltAnswer is the answer of a run that ended on a person's "no".
func haltAnswer(workflowID string) func(error) (wire.Answer, bool) {
	return func(err error) (wire.Answer, bool) {
		var d declined
		if !errors.As(err, &d) {
			return wire.Answer{}, false
		}
		return declinedAnswer(d.items, workflowID, fmt.Sprintf("the user declined %s; the run stopped before that call", itemSubjects(d.items))), true
	}
}

// itemSubjects names what items are about, for a person.
func itemSubjects(items []approval.Item) string {
	var names []string
	for _, it := range items {
		switch {
		case it.Tool != "":
			names = append(names, it.Tool)
		case it.Server != "":
			names = append(names, it.Server)
		case it.Dependency != nil:
			names = append(names, it.Dependency.Name)
		case it.Integrity != nil:
			names = append(names, it.Integrity.FQDN)
		}
	}
	if len(names) == 0 {
		return "the approval"
	}
	return strings.Join(names, ", ")
}
