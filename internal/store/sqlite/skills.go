package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pml-go/pml/internal/store"
)

// ApproveSkill keeps scope's approval of one version (store.Store).
func (s *Store) ApproveSkill(ctx context.Context, sc store.Scope, a store.SkillApproval) error {
	if a.CreatedAt.IsZero() {
		a.CreatedAt = time.Now()
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO skill_approvals (org, project, fqdn, approved_by, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (org, project, fqdn) DO NOTHING`,
		sc.Org, sc.Project, a.FQDN, a.ApprovedBy, formatTime(a.CreatedAt))
	return wrap("approve skill", err)
}

// ApprovedSkills answers which of fqdns scope approved (store.Store).
func (s *Store) ApprovedSkills(ctx context.Context, sc store.Scope, fqdns []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, f := range fqdns {
		var one int
		err := s.r.QueryRowContext(ctx, `SELECT 1 FROM skill_approvals WHERE org = $1 AND project = $2 AND fqdn = $3`,
			sc.Org, sc.Project, f).Scan(&one)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return nil, wrap("approved skills", err)
		default:
			out[f] = true
		}
	}
	return out, nil
}

// SkillApprovals lists scope's approvals, newest first (store.Store).
func (s *Store) SkillApprovals(ctx context.Context, sc store.Scope) ([]store.SkillApproval, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT fqdn, approved_by, created_at FROM skill_approvals
		WHERE org = $1 AND project = $2 ORDER BY created_at DESC, fqdn`, sc.Org, sc.Project)
	if err != nil {
		return nil, wrap("skill approvals", err)
	}
	defer rows.Close()
	var out []store.SkillApproval
	for rows.Next() {
		var a store.SkillApproval
		var created string
		if err := rows.Scan(&a.FQDN, &a.ApprovedBy, &created); err != nil {
			return nil, wrap("skill approvals", err)
		}
		if a.CreatedAt, err = parseTime(created); err != nil {
			return nil, wrap("skill approvals", err)
		}
		out = append(out, a)
	}
	return out, wrap("skill approvals", rows.Err())
}

// RevokeSkill deletes scope's approval of fqdn (store.Store).
func (s *Store) RevokeSkill(ctx context.Context, sc store.Scope, fqdn string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM skill_approvals WHERE org = $1 AND project = $2 AND fqdn = $3`, sc.Org, sc.Project, fqdn)
	n, err := affected(res, err)
	if err == nil && n == 0 {
		return fmt.Errorf("revoke skill %s: %w", fqdn, store.ErrNotFound)
	}
	return wrap("revoke skill", err)
}

// PutPendingRun keeps a run waiting for an approval (store.Store).
func (s *Store) PutPendingRun(ctx context.Context, sc store.Scope, id string, payload []byte) (err error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return wrap("put pending run", err)
	}
	defer rollbackUnlessCommitted(tx, &err)
	now := time.Now()
	if _, err := tx.ExecContext(ctx, `DELETE FROM pending_runs WHERE created_at < $1`, formatTime(now.Add(-store.MaxPendingAge))); err != nil {
		return wrap("put pending run", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO pending_runs (id, org, project, payload, created_at) VALUES ($1, $2, $3, $4, $5)`,
		id, sc.Org, sc.Project, string(payload), formatTime(now)); err != nil {
		return wrap("put pending run", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM pending_runs WHERE org = $1 AND project = $2 AND id NOT IN (
		SELECT id FROM pending_runs WHERE org = $1 AND project = $2 ORDER BY created_at DESC, id LIMIT $3)`,
		sc.Org, sc.Project, store.MaxPendingRuns); err != nil {
		return wrap("put pending run", err)
	}
	return wrap("put pending run", tx.Commit())
}

// TakePendingRun returns and deletes a waiting run (store.Store).
func (s *Store) TakePendingRun(ctx context.Context, sc store.Scope, id string) ([]byte, error) {
	var payload string
	err := s.w.QueryRowContext(ctx, `DELETE FROM pending_runs WHERE org = $1 AND project = $2 AND id = $3 AND created_at >= $4 RETURNING payload`,
		sc.Org, sc.Project, id, formatTime(time.Now().Add(-store.MaxPendingAge))).Scan(&payload)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("pending run %s: %w", id, store.ErrNotFound)
	}
	return []byte(payload), wrap("take pending run", err)
}
