package storeutil

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
