-- Timestamps are TEXT in a fixed-width UTC format (2006-01-02T15:04:05.000000Z)
-- so that text order is time order. JSON columns are TEXT.

CREATE TABLE api_keys (
    id         TEXT PRIMARY KEY,
    hash       TEXT NOT NULL UNIQUE,
    org        TEXT NOT NULL,
    project    TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- seq is the insertion order: the tie-breaker between versions saved within
-- the same microsecond.
CREATE TABLE capabilities (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT NOT NULL UNIQUE,
    org         TEXT NOT NULL,
    project     TEXT NOT NULL,
    namespace   TEXT NOT NULL,
    action      TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    code        TEXT NOT NULL,
    code_hash   TEXT NOT NULL,
    tools_used  TEXT NOT NULL DEFAULT '[]',
    routing     TEXT NOT NULL DEFAULT '',
    args_schema TEXT,
    visibility  TEXT NOT NULL CHECK (visibility IN ('private', 'project', 'org', 'public')),
    usage_count INTEGER NOT NULL DEFAULT 1,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (org, project, code_hash)
);
CREATE INDEX capabilities_name ON capabilities (namespace, action);
CREATE INDEX capabilities_scope ON capabilities (org, project);

-- Trace IDs are unique per scope, not globally: one tenant's trace can never
-- shadow or block another's.
CREATE TABLE traces (
    org             TEXT NOT NULL,
    project         TEXT NOT NULL,
    id              TEXT NOT NULL,
    parent_id       TEXT NOT NULL DEFAULT '',
    workflow_id     TEXT NOT NULL DEFAULT '',
    capability_fqdn TEXT NOT NULL DEFAULT '',
    tools           TEXT NOT NULL DEFAULT '[]',
    success         INTEGER NOT NULL,
    started_at      TEXT NOT NULL,
    body            TEXT,
    PRIMARY KEY (org, project, id)
);
CREATE INDEX traces_started ON traces (org, project, started_at DESC, id DESC);
CREATE INDEX traces_parent ON traces (org, project, parent_id) WHERE parent_id <> '';
CREATE INDEX traces_workflow ON traces (org, project, workflow_id) WHERE workflow_id <> '';
CREATE INDEX traces_fqdn ON traces (org, project, capability_fqdn) WHERE capability_fqdn <> '';

CREATE TABLE client_tools (
    org          TEXT NOT NULL,
    project      TEXT NOT NULL,
    client_id    TEXT NOT NULL,
    tool_id      TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT '',
    input_schema TEXT,
    reported_at  TEXT NOT NULL,
    PRIMARY KEY (org, project, client_id, tool_id)
);
CREATE INDEX client_tools_tool ON client_tools (org, project, tool_id);
