package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// SaveCapability inserts c or, when its scope already has the same code,
// counts one more use of the existing capability and returns it. The upsert
// is one statement, so concurrent saves of one code cannot create two rows.
func (s *Store) SaveCapability(ctx context.Context, c store.Capability) (store.Capability, error) {
	c, err := storeutil.NewCapability(c)
	if err != nil {
		return store.Capability{}, wrap(ctx, "save capability", err)
	}
	row := s.pool.QueryRow(ctx, `
		INSERT INTO capabilities (id, org, project, namespace, action, description, code, code_hash,
			tools_used, routing, args_schema, visibility, usage_count, created_at, updated_at,
			output_schema, params_lifted, intent_runs)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $13)
		ON CONFLICT (org, project, code_hash) DO UPDATE SET usage_count = capabilities.usage_count + 1,
			intent_runs = capabilities.intent_runs + (lower(capabilities.description) = lower(excluded.description))::int
		RETURNING `+storeutil.CapabilityColumns,
		c.ID, c.Scope.Org, c.Scope.Project, c.Namespace, c.Action, c.Description, c.Code, c.CodeHash,
		c.ToolsUsed, c.Routing, nullJSON(c.ArgsSchema), string(c.Visibility), c.UsageCount,
		c.CreatedAt, c.UpdatedAt, nullJSON(c.OutputSchema), c.ParamsLifted)
	saved, err := scanCapability(row)
	return saved, wrap(ctx, "save capability", err)
}

// CapabilityByID finds a capability by its ID, whatever its scope.
func (s *Store) CapabilityByID(ctx context.Context, id string) (store.Capability, error) {
	row := s.pool.QueryRow(ctx, `SELECT `+storeutil.CapabilityColumns+` FROM capabilities WHERE id = $1`, id)
	c, err := scanCapability(row)
	return c, wrap(ctx, "capability by id", err)
}

// CapabilityByName finds namespace:action among what viewer may see: its own
// scope first, then its org, then public; the latest version within each.
func (s *Store) CapabilityByName(ctx context.Context, viewer store.Scope, namespace, action string) (store.Capability, error) {
	row := s.pool.QueryRow(ctx, storeutil.CapabilityByName, viewer.Org, viewer.Project, namespace, action)
	c, err := scanCapability(row)
	return c, wrap(ctx, fmt.Sprintf("capability by name %s:%s", namespace, action), err)
}

// ListCapabilities lists what f.Viewer may see, ordered by name then latest
// first, with the total before pagination.
func (s *Store) ListCapabilities(ctx context.Context, f store.CapabilityFilter) ([]store.Capability, int, error) {
	limit, offset := page(f.Limit, f.Offset)
	var total int
	list, count := storeutil.CapabilityList(f)
	if err := s.pool.QueryRow(ctx, count, f.Viewer.Org, f.Viewer.Project).Scan(&total); err != nil {
		return nil, 0, wrap(ctx, "count capabilities", err)
	}
	rows, err := s.pool.Query(ctx, list, f.Viewer.Org, f.Viewer.Project, limit, offset)
	if err != nil {
		return nil, 0, wrap(ctx, "list capabilities", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Capability, error) { return scanCapability(r) })
	if err != nil {
		return nil, 0, wrap(ctx, "list capabilities", err)
	}
	return out, total, nil
}

// UpdateCapability replaces the mutable fields of the capability c.ID owned
// by c.Scope.
func (s *Store) UpdateCapability(ctx context.Context, c store.Capability) error {
	c, err := storeutil.UpdatedCapability(c)
	if err != nil {
		return wrap(ctx, "update capability", err)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE capabilities
		SET namespace = $1, action = $2, description = $3, visibility = $4, args_schema = $5, updated_at = $6
		WHERE id = $7 AND org = $8 AND project = $9`,
		c.Namespace, c.Action, c.Description, string(c.Visibility), nullJSON(c.ArgsSchema),
		c.UpdatedAt, c.ID, c.Scope.Org, c.Scope.Project)
	if err != nil {
		return wrap(ctx, "update capability", err)
	}
	if tag.RowsAffected() == 0 {
		return wrap(ctx, "update capability "+c.ID, pgx.ErrNoRows)
	}
	return nil
}

func scanCapability(row scanner) (store.Capability, error) {
	var (
		c            store.Capability
		args, output []byte
		vis          string
	)
	err := row.Scan(&c.ID, &c.Scope.Org, &c.Scope.Project, &c.Namespace, &c.Action, &c.Description,
		&c.Code, &c.CodeHash, &c.ToolsUsed, &c.Routing, &args, &vis, &c.UsageCount, &c.CreatedAt, &c.UpdatedAt, &c.Uses,
		&output, &c.ParamsLifted, &c.RecentRuns, &c.IntentRuns)
	if err != nil {
		return store.Capability{}, err
	}
	c.Visibility = store.Visibility(vis)
	c.ArgsSchema = rawJSON(args)
	c.OutputSchema = rawJSON(output)
	if c.ToolsUsed == nil {
		c.ToolsUsed = []string{}
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, nil
}

// CountCapabilityUse adds one call to the capability's uses.
func (s *Store) CountCapabilityUse(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE capabilities SET uses = uses + 1 WHERE id = $1`, id)
	if err != nil {
		return wrap(ctx, "count capability use", err)
	}
	if tag.RowsAffected() == 0 {
		return wrap(ctx, "count capability use "+id, pgx.ErrNoRows)
	}
	return nil
}

// RenameCapability renames every version of scope's capability from (its
// namespace and action) to, in one transaction, and keeps from as an alias
// of to (store.Store).
func (s *Store) RenameCapability(ctx context.Context, scope store.Scope, from, to store.CapabilityName) error {
	return wrap(ctx, "rename capability", pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, storeutil.RenameCapabilityRows, scope.Org, scope.Project, from.Namespace, from.Action, to.Namespace, to.Action)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrNotFound
		}
		if _, err := tx.Exec(ctx, storeutil.DropAlias, scope.Org, scope.Project, to.Namespace, to.Action); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, storeutil.RepointAliases, scope.Org, scope.Project, from.Namespace, from.Action, to.Namespace, to.Action); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, storeutil.AddAlias, scope.Org, scope.Project, from.Namespace, from.Action, to.Namespace, to.Action)
		return err
	}))
}

// ForgetCapability deletes every version of scope's capability named name,
// and the old names pointing at it (store.Store).
func (s *Store) ForgetCapability(ctx context.Context, scope store.Scope, name store.CapabilityName) error {
	return wrap(ctx, "forget capability", pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, storeutil.ForgetCapabilityRows, scope.Org, scope.Project, name.Namespace, name.Action)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrNotFound
		}
		_, err = tx.Exec(ctx, storeutil.ForgetAliases, scope.Org, scope.Project, name.Namespace, name.Action)
		return err
	}))
}
