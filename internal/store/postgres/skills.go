package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pml-go/pml/internal/store"
)

// ApproveSkill keeps scope's approval of one version (store.Store).
func (s *Store) ApproveSkill(ctx context.Context, sc store.Scope, a store.SkillApproval) error {
	if a.CreatedAt.IsZero() {
		a.CreatedAt = time.Now()
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO skill_approvals (org, project, fqdn, approved_by, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (org, project, fqdn) DO NOTHING`,
		sc.Org, sc.Project, a.FQDN, a.ApprovedBy, a.CreatedAt)
	return wrap(ctx, "approve skill", err)
}

// ApprovedSkills answers which of fqdns scope approved (store.Store).
func (s *Store) ApprovedSkills(ctx context.Context, sc store.Scope, fqdns []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(fqdns) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT fqdn FROM skill_approvals WHERE org = $1 AND project = $2 AND fqdn = ANY($3)`,
		sc.Org, sc.Project, fqdns)
	if err != nil {
		return nil, wrap(ctx, "approved skills", err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, wrap(ctx, "approved skills", err)
	}
	for _, f := range found {
		out[f] = true
	}
	return out, nil
}

// SkillApprovals lists scope's approvals, newest first (store.Store).
func (s *Store) SkillApprovals(ctx context.Context, sc store.Scope) ([]store.SkillApproval, error) {
	rows, err := s.pool.Query(ctx, `SELECT fqdn, approved_by, created_at FROM skill_approvals
		WHERE org = $1 AND project = $2 ORDER BY created_at DESC, fqdn`, sc.Org, sc.Project)
	if err != nil {
		return nil, wrap(ctx, "skill approvals", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.SkillApproval, error) {
		var a store.SkillApproval
		err := r.Scan(&a.FQDN, &a.ApprovedBy, &a.CreatedAt)
		a.CreatedAt = a.CreatedAt.UTC()
		return a, err
	})
	return out, wrap(ctx, "skill approvals", err)
}

// RevokeSkill deletes scope's approval of fqdn (store.Store).
func (s *Store) RevokeSkill(ctx context.Context, sc store.Scope, fqdn string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM skill_approvals WHERE org = $1 AND project = $2 AND fqdn = $3`, sc.Org, sc.Project, fqdn)
	if err == nil && tag.RowsAffected() == 0 {
		return fmt.Errorf("revoke skill %s: %w", fqdn, store.ErrNotFound)
	}
	return wrap(ctx, "revoke skill", err)
}

// PutPendingRun keeps a run waiting for an approval (store.Store).
func (s *Store) PutPendingRun(ctx context.Context, sc store.Scope, id string, payload []byte) error {
	now := time.Now()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM pending_runs WHERE created_at < $1`, now.Add(-store.MaxPendingAge)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO pending_runs (id, org, project, payload, created_at) VALUES ($1, $2, $3, $4, $5)`,
			id, sc.Org, sc.Project, string(payload), now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM pending_runs WHERE org = $1 AND project = $2 AND id NOT IN (
			SELECT id FROM pending_runs WHERE org = $1 AND project = $2 ORDER BY created_at DESC, id LIMIT $3)`,
			sc.Org, sc.Project, store.MaxPendingRuns)
		return err
	})
	return wrap(ctx, "put pending run", err)
}

// TakePendingRun returns and deletes a waiting run (store.Store).
func (s *Store) TakePendingRun(ctx context.Context, sc store.Scope, id string) ([]byte, error) {
	var payload string
	err := s.pool.QueryRow(ctx, `DELETE FROM pending_runs WHERE org = $1 AND project = $2 AND id = $3 AND created_at >= $4 RETURNING payload`,
		sc.Org, sc.Project, id, time.Now().Add(-store.MaxPendingAge)).Scan(&payload)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("pending run %s: %w", id, store.ErrNotFound)
	}
	return []byte(payload), wrap(ctx, "take pending run", err)
}
