package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/pml-go/pml/internal/store"
)

// runSkillApprovals: an approval is one version's, of one project; revoked,
// it is gone; a pending run is taken once, by its own scope only, and a
// scope keeps at most MaxPendingRuns.
func runSkillApprovals(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	ctx := context.Background()
	a, b := store.Scope{Org: "beta", Project: "app"}, store.Scope{Org: "beta", Project: "other"}
	const v1, v2 = "acme.web.cap.slug.1a2b", "acme.web.cap.slug.3c4d"
	for range 2 { // again: unchanged
		if err := s.ApproveSkill(ctx, a, store.SkillApproval{FQDN: v1, ApprovedBy: "key k1"}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ApprovedSkills(ctx, a, []string{v1, v2})
	if err != nil || !got[v1] || got[v2] {
		t.Fatalf("approved: %v %v", got, err)
	}
	if got, _ := s.ApprovedSkills(ctx, b, []string{v1}); got[v1] {
		t.Fatal("another project sees the approval")
	}
	list, err := s.SkillApprovals(ctx, a)
	if err != nil || len(list) != 1 || list[0].FQDN != v1 || list[0].ApprovedBy != "key k1" || list[0].CreatedAt.IsZero() {
		t.Fatalf("list: %+v %v", list, err)
	}
	if err := s.RevokeSkill(ctx, b, v1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoke another project's: %v", err)
	}
	if err := s.RevokeSkill(ctx, a, v1); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ApprovedSkills(ctx, a, []string{v1}); got[v1] {
		t.Fatal("revoked, still approved")
	}

	if err := s.PutPendingRun(ctx, a, "w1", []byte(`{"code":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TakePendingRun(ctx, b, "w1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another scope took it: %v", err)
	}
	if p, err := s.TakePendingRun(ctx, a, "w1"); err != nil || string(p) != `{"code":"x"}` {
		t.Fatalf("take: %s %v", p, err)
	}
	if _, err := s.TakePendingRun(ctx, a, "w1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("taken twice: %v", err)
	}
	for i := range store.MaxPendingRuns + 5 {
		if err := s.PutPendingRun(ctx, b, fmt.Sprintf("p%03d", i), []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.TakePendingRun(ctx, b, "p000"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("past the bound, the oldest stays: %v", err)
	}
	if _, err := s.TakePendingRun(ctx, b, fmt.Sprintf("p%03d", store.MaxPendingRuns+4)); err != nil {
		t.Fatalf("the newest: %v", err)
	}
}
