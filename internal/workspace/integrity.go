package workspace

import (
	"errors"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/lockfile"
	regclient "github.com/pml-go/pml/internal/registry/client"
	"github.com/pml-go/pml/internal/registry/fqdn"
)

// acceptIntegrity records an approved registry entry change in the lockfile.
func (p *Workspace) acceptIntegrity(it approval.Item) error {
	lf, err := p.lockfile()
	if err != nil {
		return err
	}
	return regclient.Accept(lf, it)
}

// lockfile opens .pml/mcp.lock, dropping the entries of tools the
// permissions now deny. A tool in no list is "ask", so its entry stays:
// dropping it would make the next fetch look new and hide a changed entry.
func (p *Workspace) lockfile() (*lockfile.Lockfile, error) {
	perms := p.permissions()
	return lockfile.Open(p.ws, func(base string) bool {
		n, err := fqdn.Parse(base)
		if err != nil {
			return false
		}
		id := n.Namespace + ":" + n.Action
		if n.Org == "pml" && n.Project == "mcp" {
			id = n.Namespace + ":*" // a server entry stands for all its tools
		}
		return perms.Decide(id) != approval.Deny
	})
}

func (p *Workspace) permissions() approval.Permissions {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg.Permissions
}

// trusted checks a catalog entry the package is about to act on against the
// lockfile: the first sight is recorded, the same entry passes, a changed
// one (command, arguments, key names, proxy target) is an integrity item the
// person must approve first.
func (p *Workspace) trusted(e regclient.Entry) (*approval.Item, error) {
	lf, err := p.lockfile()
	if err != nil {
		return nil, err
	}
	var mm *regclient.MismatchError
	switch err := regclient.Check(lf, e); {
	case errors.As(err, &mm):
		it := mm.Item()
		return &it, nil
	case err != nil:
		return nil, err
	}
	return nil, nil
}
