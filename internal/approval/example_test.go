package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pml-go/pml/internal/approval"
)

// The pieces composed the way the package's execute flow uses them: the code
// writes a file (allowed), then calls the shell (ask); the run pauses, the
// person approves, and the re-run replays the write instead of repeating it.
func Example() {
	perms := approval.Permissions{Allow: []string{"filesystem"}, Ask: []string{"shell"}}
	store := approval.NewStore[string](0, nil)
	journal := approval.NewJournal()
	writes := 0
	approved := map[string]bool{}

	errPause := errors.New("pause")
	var pending []approval.Item
	// The permission layer: an unapproved "ask" tool halts the run.
	permit := func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if perms.Decide(tool) == approval.Ask && !approved[tool] {
			pending = append(pending, approval.ToolPermissionItem(tool))
			return nil, errPause
		}
		if tool == "filesystem:write_file" {
			writes++
		}
		return json.RawMessage(`"ok"`), nil
	}
	code := `await mcp.filesystem.write_file({path:"a"}); await mcp.shell.exec({command:"ls"})`
	run := func() error { // stands for the sandbox running code
		call := journal.Wrap(permit, func(err error) bool { return errors.Is(err, errPause) })
		for _, c := range []struct{ tool, args string }{
			{"filesystem:write_file", `{"path":"a"}`}, {"shell:exec", `{"command":"ls"}`},
		} {
			if _, err := call(context.Background(), c.tool, json.RawMessage(c.args)); err != nil {
				return err
			}
		}
		return nil
	}

	if err := run(); errors.Is(err, errPause) {
		w := store.Create(approval.Workflow[string]{Code: code, Items: pending, Journal: journal})
		answer := approval.NewRequired(w.ID, w.Items)
		fmt.Println(answer.Status, answer.ApprovalType, answer.Description)

		// continue_workflow {workflow_id: w.ID, approved: true}
		w, _ = store.Take(w.ID)
		if err := w.CheckCode(code); err != nil {
			panic(err)
		}
		for _, it := range w.Items {
			approved[it.Tool] = true
		}
		fmt.Println("resumed:", run() == nil, "writes:", writes, "journal:", w.Journal.Len())
	}
	// Output:
	// approval_required tool_permission Allow the code to call shell:exec? It is not in the allow list of .pml.json.
	// Answer continue to approve this execution only, or always (continue_workflow with approved: true, always: true) to also add shell:exec to the allow list of .pml.json so it no longer asks.
	// resumed: true writes: 1 journal: 2
}
