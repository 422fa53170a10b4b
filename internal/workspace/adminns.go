package workspace

import (
	"context"
	"encoding/json"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/wire"
)

// AdminNamespace is where code reaches the admin tool, as discover's
// description tells the AI to: mcp.pml.admin({...}). AI clients call only
// the tools of tools/list, and admin is left out of it (docs/protocol.md
// "Gateway MCP tools"), so code run through execute is its one sure way
// in. Its calls are gated like any tool's: the person approves them unless
// .pml.json allows pml:admin.
const AdminNamespace = "pml"

// adminProvider serves pml:admin on this machine by forwarding to the
// gateway, which owns the capabilities.
type adminProvider struct{ p *Workspace }

func (a adminProvider) Tools(context.Context) ([]tools.Info, error) {
	t := wire.AdminTool()
	schema, _ := json.Marshal(t.InputSchema)
	return []tools.Info{{ID: AdminNamespace + ":admin", Description: t.Description, InputSchema: schema}}, nil
}

func (a adminProvider) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	if tool != AdminNamespace+":admin" {
		return nil, pmlerr.New(pmlerr.UnknownTool, "%s: the %s namespace has one tool, %s:admin", tool, AdminNamespace, AdminNamespace).With("tool", tool)
	}
	return a.p.gw.Admin(ctx, args)
}
