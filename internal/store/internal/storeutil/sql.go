package storeutil

import (
	"strconv"

	"github.com/pml-go/pml/internal/store"
)

// SQL both backends share (their dialects agree on these).

// CapabilityColumns is the column list every capability query selects, in
// the order the backends' scanners read.
const CapabilityColumns = `id, org, project, namespace, action, description, code, code_hash,
	tools_used, routing, args_schema, visibility, usage_count, created_at, updated_at, uses,
	output_schema, params_lifted, recent_runs, intent_runs`

// VisibleTo is the visibility rule for viewer ($1 org, $2 project): own
// scope sees everything it owns, the same org sees "org" and "public",
// everyone sees "public".
const VisibleTo = `((org = $1 AND (project = $2 OR visibility IN ('org', 'public'))) OR visibility = 'public')`

// CapabilityList is the query of ListCapabilities for f, both dialects:
// $1 org and $2 project of the viewer, $3 limit, $4 offset; the count query
// takes $1 and $2. With f.Current only the newest row of each name (one
// project's namespace:action) is listed; f.Owners narrows to the viewer's
// org or to other orgs' public rows, so one listing never depends on how
// many rows the other holds; f.MaxCodeChars leaves out larger code.
func CapabilityList(f store.CapabilityFilter) (list, count string) {
	where := VisibleTo
	switch f.Owners {
	case store.OwnOrg:
		where += ` AND org = $1`
	case store.OtherOrgs:
		where += ` AND org <> $1`
	}
	if f.MaxCodeChars > 0 {
		where += ` AND length(code) <= ` + strconv.Itoa(f.MaxCodeChars)
	}
	from := `capabilities WHERE ` + where
	if f.Current {
		from = `(SELECT *, ROW_NUMBER() OVER (PARTITION BY org, project, namespace, action
			ORDER BY updated_at DESC, seq DESC) AS version_rank FROM capabilities WHERE ` + where + `) AS current_versions
			WHERE version_rank = 1`
	}
	return `SELECT ` + CapabilityColumns + ` FROM ` + from + `
		ORDER BY namespace, action, updated_at DESC, seq DESC
		LIMIT $3 OFFSET $4`, `SELECT count(*) FROM ` + from
}

// CapabilityByName is the query of CapabilityByName, both dialects: $1 org
// and $2 project of the viewer, $3 namespace, $4 action. A name the
// viewer's project renamed (capability_aliases) finds what it was renamed
// to, after the project's own capabilities of that name and before its
// org's and public ones.
const CapabilityByName = `SELECT ` + CapabilityColumns + ` FROM capabilities
	WHERE ((namespace = $3 AND action = $4) OR (org = $1 AND project = $2 AND (namespace, action) IN (
		SELECT target_namespace, target_action FROM capability_aliases
		WHERE org = $1 AND project = $2 AND namespace = $3 AND action = $4))) AND ` + VisibleTo + `
	ORDER BY CASE WHEN org = $1 AND project = $2 AND namespace = $3 AND action = $4 THEN 0
		WHEN org = $1 AND project = $2 THEN 1 WHEN org = $1 THEN 2 ELSE 3 END,
		updated_at DESC, seq DESC
	LIMIT 1`

// Statements of RenameCapability and ForgetCapability, both dialects: $1
// org and $2 project; then the old name ($3, $4) and the new ($5, $6), or
// one name ($3, $4).
const (
	RenameCapabilityRows = `UPDATE capabilities SET namespace = $5, action = $6
		WHERE org = $1 AND project = $2 AND namespace = $3 AND action = $4`
	// An alias of the new name ($3, $4) is a name again.
	DropAlias = `DELETE FROM capability_aliases WHERE org = $1 AND project = $2 AND namespace = $3 AND action = $4`
	// Old names of the old name follow it.
	RepointAliases = `UPDATE capability_aliases SET target_namespace = $5, target_action = $6
		WHERE org = $1 AND project = $2 AND target_namespace = $3 AND target_action = $4`
	AddAlias = `INSERT INTO capability_aliases (org, project, namespace, action, target_namespace, target_action)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (org, project, namespace, action) DO UPDATE SET target_namespace = $5, target_action = $6`
	ForgetCapabilityRows = `DELETE FROM capabilities WHERE org = $1 AND project = $2 AND namespace = $3 AND action = $4`
	ForgetAliases        = `DELETE FROM capability_aliases WHERE org = $1 AND project = $2
		AND ((namespace = $3 AND action = $4) OR (target_namespace = $3 AND target_action = $4))`
)
