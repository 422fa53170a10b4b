package gateway_test

import (
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/wire"
)

// admin finds a capability by the name code calls it with, before and after
// a rename; a name nobody in the caller's org has is UNKNOWN_TOOL.
func TestAdminTargetByName(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	ref := learn(t, s, sumCode, "")
	if ref.Name != "cap:add_math" {
		t.Fatalf("name without intent: %s", ref.Name)
	}
	got, failed := admin(t, s, wire.AdminRequest{Action: "rename", Target: ref.Name, NewNamespace: "calc", NewAction: "sum"})
	if failed.Status != "" || got.Capability.ID != ref.ID || got.Capability.Name != "calc:sum" {
		t.Fatalf("rename by name: %+v %+v", got, failed)
	}
	desc := "Adds a and b"
	got, failed = admin(t, s, wire.AdminRequest{Action: "describe", Target: "calc:sum", Description: &desc})
	if failed.Status != "" || got.Capability.ID != ref.ID || got.Capability.Description != desc {
		t.Fatalf("describe by new name: %+v %+v", got, failed)
	}
	// The old name is the project's alias of the new one.
	if got, failed := admin(t, s, wire.AdminRequest{Action: "describe", Target: ref.Name, Description: &desc}); failed.Status != "" || got.Capability.ID != ref.ID {
		t.Fatalf("describe by the old name: %+v %+v", got, failed)
	}
	// Another org's public capability of the same name is not the caller's
	// to change, nor to find by a bare name.
	foreign := g.Connect(t, g.NewKey(t, store.Scope{Org: "globex", Project: "web"}), false)
	for name, req := range map[string]wire.AdminRequest{
		"unknown name":    {Action: "describe", Target: "calc:nope", Description: &desc},
		"empty action":    {Action: "describe", Target: "calc:", Description: &desc},
		"other org, bare": {Action: "describe", Target: "calc:sum", Description: &desc},
	} {
		sess := s
		if name == "other org, bare" {
			if _, f := admin(t, s, visibility(ref.ID, "public")); f.Status != "" {
				t.Fatal(f)
			}
			sess = foreign
		}
		_, failed := admin(t, sess, req)
		if failed.Status != wire.StatusError || failed.ErrorCode != pmlerr.UnknownTool {
			t.Errorf("%s: %+v, want %s", name, failed, pmlerr.UnknownTool)
		}
		alive(t, sess)
	}
}
