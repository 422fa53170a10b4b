package workspace

import (
	"context"
	"encoding/json"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/wire"
)

// AdminNamespace is where code reaches the admin tool, as discover's
// description tells the AI to: mcp.pml.admin({...}). AI clients call only
// the tools of tools/list, and admin is left out of it (docs/protocol.md
// "Gateway MCP tools"), so code run through execute is its one sure way
// in. Its calls are gated by what they do (gateAdmin).
const AdminNamespace = "pml"

// adminToolID is the one tool of AdminNamespace.
const adminToolID = AdminNamespace + ":admin"

// adminProvider serves pml:admin on this machine by forwarding to the
// gateway, which owns the capabilities.
type adminProvider struct{ p *Workspace }

func (a adminProvider) Tools(context.Context) ([]tools.Info, error) {
	t := wire.AdminTool()
	schema, _ := json.Marshal(t.InputSchema)
	return []tools.Info{{ID: adminToolID, Description: t.Description, InputSchema: schema}}, nil
}

func (a adminProvider) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	if tool != adminToolID {
		return nil, pmlerr.New(pmlerr.UnknownTool, "%s: the %s namespace has one tool, %s:admin", tool, AdminNamespace, AdminNamespace).With("tool", tool)
	}
	return a.p.gw.Admin(ctx, args)
}

// gateAdmin is the one rule of admin: its arguments are checked before
// anyone is asked; reading (show, list, describe without a description)
// asks nothing; a change (rename, describe, visibility, forget: what the
// projects and orgs that see the skill see) asks the person for that one
// call, unless .pml.json allows pml:admin or this execution already
// approved the tool (docs/security.md "Approvals").
func gateAdmin(perms approval.Permissions, g *grants, args json.RawMessage) error {
	req, err := wire.DecodeAdmin(args)
	switch {
	case err != nil:
		return err
	case req.ReadOnly():
		return nil
	}
	switch perms.Decide(adminToolID) {
	case approval.Deny:
		return pmlerr.New(pmlerr.PermissionDenied, "%s is denied by the permissions in %s", adminToolID, ConfigFile).With("tool", adminToolID)
	case approval.Allow:
		return nil
	}
	hash := approval.ArgsHash(args)
	if g.tool(adminToolID) || g.call(adminToolID, hash) {
		return nil
	}
	return needApproval{item: approval.CallItem(adminToolID, hash, req.Action, req.Target, req.Effect())}
}
