package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pml-go/pml/internal/learning"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/registry"
	"github.com/pml-go/pml/internal/registry/fqdn"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/textcut"
	"github.com/pml-go/pml/internal/tokenauth"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/wire"
)

// AdminAnswer is the admin tool's output: the capability as it is now, or
// the project's capabilities (list).
type AdminAnswer struct {
	Status       string           `json:"status"` // "ok"
	Capability   *CapabilityInfo  `json:"capability,omitempty"`
	Capabilities []CapabilityInfo `json:"capabilities,omitempty"`
	// Forgotten says the capability, every version of its name, is gone.
	Forgotten bool `json:"forgotten,omitempty"`
}

// CapabilityInfo describes a capability to its owner.
type CapabilityInfo struct {
	ID          string           `json:"id"`
	FQDN        string           `json:"fqdn"`
	Name        string           `json:"name"` // "namespace:action", what code calls
	Description string           `json:"description"`
	Visibility  store.Visibility `json:"visibility"`
	Routing     string           `json:"routing"`
	ToolsUsed   []string         `json:"tools_used"`
	// Uses is the times it ran, the same number discover and the catalog
	// show (store.Capability.TimesRun).
	Uses int64 `json:"uses"`
}

// Admin changes a capability of the caller's project.
func (s *Service) Admin(ctx context.Context, c Caller, req wire.AdminRequest) (AdminAnswer, error) {
	if s.store == nil {
		return AdminAnswer{}, pmlerr.New(pmlerr.InvalidRequest, "this gateway has no store, hence no capabilities")
	}
	if err := req.Validate(); err != nil {
		return AdminAnswer{}, err
	}
	if req.Action == wire.AdminList {
		return s.adminList(ctx, c)
	}
	if req.Action == "visibility" && c.Role != "" && !c.Role.Allows(tokenauth.RoleAdmin) {
		return AdminAnswer{}, pmlerr.New(pmlerr.Unauthorized, "admin: changing a capability's visibility needs the admin role; yours is %s", c.Role)
	}
	cp, err := s.adminTarget(ctx, c, req.Target)
	if err != nil {
		return AdminAnswer{}, err
	}
	from := store.CapabilityName{Namespace: cp.Namespace, Action: cp.Action}
	if req.ReadOnly() {
		return s.adminShow(cp)
	}
	switch req.Action {
	case "forget":
		if err := s.registry.Forget(ctx, c.Scope, from); err != nil {
			return AdminAnswer{}, pmlerr.Wrap(pmlerr.Internal, err)
		}
		info := capabilityInfo(cp, "", from.Namespace+":"+from.Action)
		return AdminAnswer{Status: "ok", Capability: &info, Forgotten: true}, nil
	case "rename":
		oldName := cp.Namespace + ":" + cp.Action
		cp.Namespace = cmp.Or(req.NewNamespace, cp.Namespace)
		cp.Action = cmp.Or(req.NewAction, cp.Action)
		if err := s.registry.CheckName(cp.Namespace, cp.Action); err != nil {
			return AdminAnswer{}, err
		}
		if name := cp.Namespace + ":" + cp.Action; name != oldName {
			// A name in use keeps its code: whoever calls it, or approved it,
			// goes on running what they approved. An old name of this very
			// capability (an alias) may be taken back.
			taken, err := s.store.CapabilityByName(ctx, c.Scope, cp.Namespace, cp.Action)
			switch {
			case err == nil && taken.Scope == c.Scope && taken.Namespace+":"+taken.Action != oldName:
				return AdminAnswer{}, pmlerr.New(pmlerr.InvalidRequest, "rename: %s is already a capability of this project (%s); pick another name", name, taken.ID).
					With("name", name)
			case err != nil && !errors.Is(err, store.ErrNotFound):
				return AdminAnswer{}, pmlerr.Wrap(pmlerr.Internal, err)
			}
		}
		if holdsSecret(cp.Namespace + ":" + cp.Action) {
			return AdminAnswer{}, secretRefused("name")
		}
		if c.servesLocally(cp.Namespace) {
			// It could never be called from this workspace.
			return AdminAnswer{}, registry.ReservedError(cp.Namespace, "is served by your PML package on your machine")
		}
	case "describe":
		desc := strings.TrimSpace(textcut.Printable(*req.Description))
		if len(desc) > learning.MaxDescriptionBytes {
			return AdminAnswer{}, pmlerr.New(pmlerr.InvalidRequest, "describe: the description is %d bytes; at most %d", len(desc), learning.MaxDescriptionBytes).
				With("max_bytes", learning.MaxDescriptionBytes)
		}
		if holdsSecret(desc) {
			return AdminAnswer{}, secretRefused("description")
		}
		cp.Description = desc
	case "visibility":
		v := store.Visibility(req.Visibility)
		if v == store.VisibilityOrg || v == store.VisibilityPublic {
			if err := shareable(cp); err != nil {
				return AdminAnswer{}, err
			}
		}
		cp.Visibility = v
	}
	if to := (store.CapabilityName{Namespace: cp.Namespace, Action: cp.Action}); to != from {
		// Every version moves, and the old name stays an alias: skills and
		// code calling it, and allow rules naming it, go on working.
		err = s.registry.Rename(ctx, c.Scope, from, to)
	} else {
		err = s.registry.Update(ctx, cp)
	}
	if err != nil {
		return AdminAnswer{}, pmlerr.Wrap(pmlerr.Internal, err)
	}
	return s.adminShow(cp)
}

// adminShow answers the capability as it is now.
func (s *Service) adminShow(cp store.Capability) (AdminAnswer, error) {
	ref, err := capabilityRef(cp)
	if err != nil {
		return AdminAnswer{}, pmlerr.Wrap(pmlerr.Internal, err)
	}
	info := capabilityInfo(cp, ref.FQDN, ref.Name)
	return AdminAnswer{Status: "ok", Capability: &info}, nil
}

// adminListMax bounds the list action's answer.
const adminListMax = 200

// adminList answers the current version of each capability of the
// caller's project, most used first as the store lists them.
func (s *Service) adminList(ctx context.Context, c Caller) (AdminAnswer, error) {
	caps, _, err := s.store.ListCapabilities(ctx, store.CapabilityFilter{Viewer: c.Scope, Owners: store.OwnOrg, Current: true, Limit: adminListMax})
	if err != nil {
		return AdminAnswer{}, pmlerr.Wrap(pmlerr.Internal, err)
	}
	out := AdminAnswer{Status: "ok", Capabilities: []CapabilityInfo{}}
	for _, cp := range caps {
		if cp.Scope != c.Scope {
			continue // the org's other projects' are theirs to manage
		}
		ref, err := capabilityRef(cp)
		if err != nil {
			return AdminAnswer{}, pmlerr.Wrap(pmlerr.Internal, err)
		}
		out.Capabilities = append(out.Capabilities, capabilityInfo(cp, ref.FQDN, ref.Name))
	}
	return out, nil
}

func capabilityInfo(cp store.Capability, fqdn, name string) CapabilityInfo {
	return CapabilityInfo{ID: cp.ID, FQDN: fqdn, Name: name, Description: cp.Description, Visibility: cp.Visibility,
		Routing: cp.Routing, ToolsUsed: wire.NonNil(cp.ToolsUsed), Uses: cp.TimesRun()}
}

// adminTarget finds the capability target names among those the caller
// sees; only its owner project may change it.
func (s *Service) adminTarget(ctx context.Context, c Caller, target string) (store.Capability, error) {
	var cp store.Capability
	if n, err := fqdn.ParseAnyHash(target); err == nil {
		e, err := s.registry.Get(ctx, c.Scope, n)
		var mismatch *registry.HashMismatchError
		switch {
		case errors.As(err, &mismatch):
			return cp, pmlerr.New(pmlerr.InvalidRequest, "%s; the current version is %s", mismatch.Error(), mismatch.Current.FQDN()).
				With("current_fqdn", mismatch.Current.FQDN())
		case errors.Is(err, registry.ErrNotFound):
			return cp, noCapability(target)
		case err != nil:
			return cp, pmlerr.Wrap(pmlerr.Internal, err)
		case e.Capability == nil:
			return cp, pmlerr.New(pmlerr.InvalidRequest, "%s is a built-in registry entry, not a capability", target)
		}
		cp = *e.Capability
	} else {
		found, err := s.capabilityByIDOrName(ctx, c, target)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return cp, noCapability(target)
		case err != nil:
			return cp, pmlerr.Wrap(pmlerr.Internal, err)
		case !registry.Visible(c.Scope, found):
			return cp, noCapability(target)
		}
		cp = found
	}
	if cp.Scope != c.Scope {
		return cp, pmlerr.New(pmlerr.PermissionDenied, "capability %s belongs to %s/%s: only that project can change it",
			target, cp.Scope.Org, cp.Scope.Project)
	}
	return cp, nil
}

// capabilityByIDOrName reads target as a capability's name ("cap:read_parse_json",
// or what it was renamed to) when it has a colon, which no id has; else as
// its id. A name is looked up in the caller's own view, as code calls it.
func (s *Service) capabilityByIDOrName(ctx context.Context, c Caller, target string) (store.Capability, error) {
	if ns, action := tools.Split(target); action != "" {
		found, err := s.store.CapabilityByName(ctx, c.Scope, ns, action)
		if err == nil && found.Scope.Org != c.Scope.Org {
			// A bare name never reaches another org's code (registry.Resolve).
			return store.Capability{}, fmt.Errorf("capability %s: %w", target, store.ErrNotFound)
		}
		return found, err
	}
	return s.store.CapabilityByID(ctx, target)
}

func noCapability(target string) error {
	return pmlerr.New(pmlerr.UnknownTool, "no capability %q visible to this key", target).With("target", target)
}

// secretRefused refuses a name or description holding a secret: they are
// served to whoever sees the capability.
func secretRefused(what string) error {
	return pmlerr.New(pmlerr.InvalidRequest, "the new %s holds a secret; a capability is shared as it is", what)
}
