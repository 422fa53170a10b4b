package sqlite

import (
	"context"
	"database/sql"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/internal/storeutil"
)

// PutClientTools replaces what clientID last reported for scope and evicts
// the scope's least recently reporting clients beyond store.MaxClientsPerScope,
// in one transaction (SQLite's single writer serialises reports).
func (s *Store) PutClientTools(ctx context.Context, sc store.Scope, clientID string, tools []store.ClientTool) (err error) {
	if err := storeutil.CheckClientTools(clientID, tools); err != nil {
		return wrap("put client tools", err)
	}
	now := formatTime(storeutil.Now())
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return wrap("put client tools: begin", err)
	}
	defer rollbackUnlessCommitted(tx, &err)
	if _, err := tx.ExecContext(ctx, `DELETE FROM client_tools WHERE org = $1 AND project = $2 AND client_id = $3`,
		sc.Org, sc.Project, clientID); err != nil {
		return wrap("put client tools: delete previous report", err)
	}
	for _, t := range tools {
		// A tool listed twice in one report: the last entry wins.
		if _, err := tx.ExecContext(ctx, `INSERT INTO client_tools
			(org, project, client_id, tool_id, description, input_schema, reported_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (org, project, client_id, tool_id)
			DO UPDATE SET description = excluded.description, input_schema = excluded.input_schema`,
			sc.Org, sc.Project, clientID, t.ID, t.Description, nullJSON(t.InputSchema), now); err != nil {
			return wrap("put client tool "+t.ID, err)
		}
	}
	// The reporting client is always kept: the others are ranked by their
	// latest report, whatever the clocks of the replicas that stored them.
	if _, err := tx.ExecContext(ctx, `DELETE FROM client_tools WHERE org = $1 AND project = $2 AND client_id IN (
			SELECT client_id FROM client_tools WHERE org = $1 AND project = $2 AND client_id <> $3
			GROUP BY client_id ORDER BY MAX(reported_at) DESC, client_id LIMIT -1 OFFSET $4)`,
		sc.Org, sc.Project, clientID, store.MaxClientsPerScope-1); err != nil {
		return wrap("put client tools: evict old clients", err)
	}
	return wrap("put client tools: commit", tx.Commit())
}

// ClientTools is the union of the tools every client of scope reported,
// sorted by ID; when two clients report the same tool, the latest report wins.
func (s *Store) ClientTools(ctx context.Context, sc store.Scope) ([]store.ClientTool, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT tool_id, description, input_schema FROM client_tools
		WHERE org = $1 AND project = $2
		ORDER BY tool_id, reported_at DESC, client_id`, sc.Org, sc.Project)
	if err != nil {
		return nil, wrap("client tools", err)
	}
	defer rows.Close()
	var all []store.ClientTool
	for rows.Next() {
		var (
			t      store.ClientTool
			schema sql.NullString
		)
		if err := rows.Scan(&t.ID, &t.Description, &schema); err != nil {
			return nil, wrap("client tools", err)
		}
		t.InputSchema = rawJSON(schema)
		all = append(all, t)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("client tools", err)
	}
	return storeutil.UnionClientTools(all), nil
}
