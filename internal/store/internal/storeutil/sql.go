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
	output_schema, params_lifted, recent_runs`

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
