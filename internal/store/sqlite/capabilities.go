package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// SaveCapability inserts c or, when its scope already has the same code,
// counts one more use of the existing capability and returns it.
func (s *Store) SaveCapability(ctx context.Context, c store.Capability) (store.Capability, error) {
	c, err := storeutil.NewCapability(c)
	if err != nil {
		return store.Capability{}, wrap("save capability", err)
	}
	tools, err := encodeStrings(c.ToolsUsed)
	if err != nil {
		return store.Capability{}, wrap("save capability", err)
	}
	row := s.w.QueryRowContext(ctx, `
		INSERT INTO capabilities (id, org, project, namespace, action, description, code, code_hash,
			tools_used, routing, args_schema, visibility, usage_count, created_at, updated_at,
			output_schema, params_lifted, intent_runs)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $13)
		ON CONFLICT (org, project, code_hash) DO UPDATE SET usage_count = usage_count + 1,
			intent_runs = intent_runs + (lower(capabilities.description) = lower(excluded.description))
		RETURNING `+storeutil.CapabilityColumns,
		c.ID, c.Scope.Org, c.Scope.Project, c.Namespace, c.Action, c.Description, c.Code, c.CodeHash,
		tools, c.Routing, nullJSON(c.ArgsSchema), string(c.Visibility), c.UsageCount,
		formatTime(c.CreatedAt), formatTime(c.UpdatedAt), nullJSON(c.OutputSchema), c.ParamsLifted)
	saved, err := scanCapability(row)
	return saved, wrap("save capability", err)
}

// CapabilityByID finds a capability by its ID, whatever its scope.
func (s *Store) CapabilityByID(ctx context.Context, id string) (store.Capability, error) {
	row := s.r.QueryRowContext(ctx, `SELECT `+storeutil.CapabilityColumns+` FROM capabilities WHERE id = $1`, id)
	c, err := scanCapability(row)
	return c, wrap("capability by id", err)
}

// CapabilityByName finds namespace:action among what viewer may see: its own
// scope first, then its org, then public; the latest version within each.
func (s *Store) CapabilityByName(ctx context.Context, viewer store.Scope, namespace, action string) (store.Capability, error) {
	row := s.r.QueryRowContext(ctx, storeutil.CapabilityByName, viewer.Org, viewer.Project, namespace, action)
	c, err := scanCapability(row)
	return c, wrap(fmt.Sprintf("capability by name %s:%s", namespace, action), err)
}

// ListCapabilities lists what f.Viewer may see, ordered by name then latest
// first, with the total before pagination.
func (s *Store) ListCapabilities(ctx context.Context, f store.CapabilityFilter) ([]store.Capability, int, error) {
	limit, offset := storeutil.Page(f.Limit, f.Offset)
	var total int
	list, count := storeutil.CapabilityList(f)
	if err := s.r.QueryRowContext(ctx, count, f.Viewer.Org, f.Viewer.Project).Scan(&total); err != nil {
		return nil, 0, wrap("count capabilities", err)
	}
	if limit == 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.r.QueryContext(ctx, list, f.Viewer.Org, f.Viewer.Project, limit, offset)
	if err != nil {
		return nil, 0, wrap("list capabilities", err)
	}
	defer rows.Close()
	out := []store.Capability{}
	for rows.Next() {
		c, err := scanCapability(rows)
		if err != nil {
			return nil, 0, wrap("list capabilities", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, wrap("list capabilities", err)
	}
	return out, total, nil
}

// UpdateCapability replaces the mutable fields of the capability c.ID owned
// by c.Scope.
func (s *Store) UpdateCapability(ctx context.Context, c store.Capability) error {
	c, err := storeutil.UpdatedCapability(c)
	if err != nil {
		return wrap("update capability", err)
	}
	res, err := s.w.ExecContext(ctx, `UPDATE capabilities
		SET namespace = $1, action = $2, description = $3, visibility = $4, args_schema = $5, updated_at = $6
		WHERE id = $7 AND org = $8 AND project = $9`,
		c.Namespace, c.Action, c.Description, string(c.Visibility), nullJSON(c.ArgsSchema),
		formatTime(c.UpdatedAt), c.ID, c.Scope.Org, c.Scope.Project)
	if err != nil {
		return wrap("update capability", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return wrap("update capability", err)
	}
	if n == 0 {
		return wrap("update capability "+c.ID, sql.ErrNoRows)
	}
	return nil
}

func scanCapability(row scanner) (store.Capability, error) {
	var (
		c                store.Capability
		tools            string
		args, output     sql.NullString
		vis              string
		created, updated string
	)
	err := row.Scan(&c.ID, &c.Scope.Org, &c.Scope.Project, &c.Namespace, &c.Action, &c.Description,
		&c.Code, &c.CodeHash, &tools, &c.Routing, &args, &vis, &c.UsageCount, &created, &updated, &c.Uses,
		&output, &c.ParamsLifted, &c.RecentRuns, &c.IntentRuns)
	if err != nil {
		return store.Capability{}, err
	}
	c.Visibility = store.Visibility(vis)
	c.ArgsSchema = rawJSON(args)
	c.OutputSchema = rawJSON(output)
	if c.ToolsUsed, err = decodeStrings(tools); err != nil {
		return store.Capability{}, err
	}
	if c.CreatedAt, err = parseTime(created); err != nil {
		return store.Capability{}, err
	}
	if c.UpdatedAt, err = parseTime(updated); err != nil {
		return store.Capability{}, err
	}
	return c, nil
}

// CountCapabilityUse adds one call to the capability's uses.
func (s *Store) CountCapabilityUse(ctx context.Context, id string) error {
	res, err := s.w.ExecContext(ctx, `UPDATE capabilities SET uses = uses + 1 WHERE id = $1`, id)
	if err != nil {
		return wrap("count capability use", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return wrap("count capability use", err)
	}
	if n == 0 {
		return wrap("count capability use "+id, sql.ErrNoRows)
	}
	return nil
}

// RenameCapability renames every version of scope's capability from (its
// namespace and action) to, in one transaction, and keeps from as an alias
// of to (store.Store).
func (s *Store) RenameCapability(ctx context.Context, scope store.Scope, from, to store.CapabilityName) (err error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return wrap("rename capability", err)
	}
	defer rollbackUnlessCommitted(tx, &err)
	res, err := tx.ExecContext(ctx, storeutil.RenameCapabilityRows, scope.Org, scope.Project, from.Namespace, from.Action, to.Namespace, to.Action)
	if err != nil {
		return wrap("rename capability", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return wrap("rename capability", cmp.Or(err, store.ErrNotFound))
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{storeutil.DropAlias, []any{scope.Org, scope.Project, to.Namespace, to.Action}},
		{storeutil.RepointAliases, []any{scope.Org, scope.Project, from.Namespace, from.Action, to.Namespace, to.Action}},
		{storeutil.AddAlias, []any{scope.Org, scope.Project, from.Namespace, from.Action, to.Namespace, to.Action}},
	} {
		if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
			return wrap("rename capability", err)
		}
	}
	return wrap("rename capability", tx.Commit())
}

// ForgetCapability deletes every version of scope's capability named name,
// and the old names pointing at it (store.Store).
func (s *Store) ForgetCapability(ctx context.Context, scope store.Scope, name store.CapabilityName) (err error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return wrap("forget capability", err)
	}
	defer rollbackUnlessCommitted(tx, &err)
	args := []any{scope.Org, scope.Project, name.Namespace, name.Action}
	res, err := tx.ExecContext(ctx, storeutil.ForgetCapabilityRows, args...)
	if err != nil {
		return wrap("forget capability", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return wrap("forget capability", cmp.Or(err, store.ErrNotFound))
	}
	if _, err := tx.ExecContext(ctx, storeutil.ForgetAliases, args...); err != nil {
		return wrap("forget capability", err)
	}
	return wrap("forget capability", tx.Commit())
}
