package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// clientToolsLockClass namespaces the per-tenant advisory locks (the
// two-int4 lock space is separate from the bigint one migrations use).
const clientToolsLockClass = 0x636c74 // "clt"

// PutClientTools replaces what clientID last reported for scope and evicts
// the scope's least recently reporting clients beyond store.MaxClientsPerScope.
// Reports of one tenant are serialised by a transaction-scoped advisory lock,
// so two concurrent reports of a client leave exactly one of them, never a
// mix, and concurrent reports of many clients never leave more than the cap.
func (s *Store) PutClientTools(ctx context.Context, sc store.Scope, clientID string, tools []store.ClientTool) error {
	if err := storeutil.CheckClientTools(clientID, tools); err != nil {
		return wrap(ctx, "put client tools", err)
	}
	now := storeutil.Now()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var batch pgx.Batch
		batch.Queue(`SELECT pg_advisory_xact_lock($1, hashtext($2))`,
			int32(clientToolsLockClass), sc.Org+"\x1f"+sc.Project)
		batch.Queue(`DELETE FROM client_tools WHERE org = $1 AND project = $2 AND client_id = $3`,
			sc.Org, sc.Project, clientID)
		for _, t := range tools {
			// A tool listed twice in one report: the last entry wins.
			batch.Queue(`INSERT INTO client_tools
				(org, project, client_id, tool_id, description, input_schema, reported_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7)
				ON CONFLICT (org, project, client_id, tool_id)
				DO UPDATE SET description = excluded.description, input_schema = excluded.input_schema`,
				sc.Org, sc.Project, clientID, t.ID, t.Description, nullJSON(t.InputSchema), now)
		}
		// The reporting client is always kept: the others are ranked by
		// their latest report, whatever the clocks of the replicas that
		// stored them.
		batch.Queue(`DELETE FROM client_tools WHERE org = $1 AND project = $2 AND client_id IN (
				SELECT client_id FROM client_tools WHERE org = $1 AND project = $2 AND client_id <> $3
				GROUP BY client_id ORDER BY MAX(reported_at) DESC, client_id OFFSET $4)`,
			sc.Org, sc.Project, clientID, store.MaxClientsPerScope-1)
		return tx.SendBatch(ctx, &batch).Close()
	})
	return wrap(ctx, "put client tools", err)
}

// ClientTools is the union of the tools every client of scope reported,
// sorted by ID; when two clients report the same tool, the latest report wins.
func (s *Store) ClientTools(ctx context.Context, sc store.Scope) ([]store.ClientTool, error) {
	rows, err := s.pool.Query(ctx, `SELECT tool_id, description, input_schema FROM client_tools
		WHERE org = $1 AND project = $2
		ORDER BY tool_id, reported_at DESC, client_id`, sc.Org, sc.Project)
	if err != nil {
		return nil, wrap(ctx, "client tools", err)
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.ClientTool, error) {
		var (
			t      store.ClientTool
			schema []byte
		)
		err := r.Scan(&t.ID, &t.Description, &schema)
		t.InputSchema = rawJSON(schema)
		return t, err
	})
	if err != nil {
		return nil, wrap(ctx, "client tools", err)
	}
	return storeutil.UnionClientTools(all), nil
}
