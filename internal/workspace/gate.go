package workspace

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tools/local"
)

// gate checks each call as it happens, for what the static plan could not
// see (a dynamic mcp[x] access, an untaken branch): a denied tool fails; one
// not approved in this execution needs an approval, which the asking layer
// around the gate gets from the person before the call runs. A call the
// tool itself refuses unapproved (a secret read, a hook write) needs an
// approval of that one call, and runs again with it. A capability of the
// project's own org is as allowed as its tools (askItems).
func (p *Workspace) gate(pl *plan, next tools.CallFunc) tools.CallFunc {
	perms := pl.cfg.Permissions
	return func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		g := grantsFrom(ctx)
		if tool == adminToolID {
			if err := gateAdmin(perms, g, args); err != nil {
				return nil, err
			}
			return next(ctx, tool, args)
		}
		switch perms.Decide(tool) {
		case approval.Deny:
			return nil, pmlerr.New(pmlerr.PermissionDenied, "%s is denied by the permissions in %s", tool, ConfigFile).With("tool", tool)
		case approval.Ask:
			if !g.tool(tool) && !allowedThrough(perms, tool, p.capabilityTools(ctx, pl), 0) {
				return nil, needApproval{item: approval.ToolPermissionItem(tool)}
			}
		}
		// Arguments are hashed only when some single call was approved.
		approved := g.hasCalls() && g.call(tool, approval.ArgsHash(args))
		out, err := next(local.WithApproval(ctx, approved), tool, args)
		var na *local.NeedsApproval
		if !approved && g != nil && errors.As(err, &na) {
			return nil, needApproval{item: approval.CallItem(tool, approval.ArgsHash(args), na.Kind, na.Path, na.Reason)}
		}
		return out, err
	}
}
