CREATE TABLE api_keys (
    id         text PRIMARY KEY,
    hash       text NOT NULL UNIQUE,
    org        text NOT NULL,
    project    text NOT NULL,
    created_at timestamptz NOT NULL
);

-- seq is the insertion order: the tie-breaker between versions saved within
-- the same microsecond.
CREATE TABLE capabilities (
    seq         bigint GENERATED ALWAYS AS IDENTITY,
    id          text PRIMARY KEY,
    org         text NOT NULL,
    project     text NOT NULL,
    namespace   text NOT NULL,
    action      text NOT NULL,
    description text NOT NULL DEFAULT '',
    code        text NOT NULL,
    code_hash   text NOT NULL,
    tools_used  jsonb NOT NULL DEFAULT '[]',
    routing     text NOT NULL DEFAULT '',
    args_schema jsonb,
    visibility  text NOT NULL CHECK (visibility IN ('private', 'project', 'org', 'public')),
    usage_count bigint NOT NULL DEFAULT 1,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    UNIQUE (org, project, code_hash)
);
CREATE INDEX capabilities_name ON capabilities (namespace, action);
CREATE INDEX capabilities_scope ON capabilities (org, project);
CREATE INDEX capabilities_shared ON capabilities (org, visibility) WHERE visibility IN ('org', 'public');

-- Trace IDs are unique per scope, not globally: one tenant's trace can never
-- shadow or block another's.
CREATE TABLE traces (
    org             text NOT NULL,
    project         text NOT NULL,
    id              text NOT NULL,
    parent_id       text NOT NULL DEFAULT '',
    workflow_id     text NOT NULL DEFAULT '',
    capability_fqdn text NOT NULL DEFAULT '',
    tools           jsonb NOT NULL DEFAULT '[]',
    success         boolean NOT NULL,
    started_at      timestamptz NOT NULL,
    body            jsonb,
    PRIMARY KEY (org, project, id)
);
CREATE INDEX traces_started ON traces (org, project, started_at DESC, id DESC);
CREATE INDEX traces_parent ON traces (org, project, parent_id) WHERE parent_id <> '';
CREATE INDEX traces_workflow ON traces (org, project, workflow_id) WHERE workflow_id <> '';
CREATE INDEX traces_fqdn ON traces (org, project, capability_fqdn) WHERE capability_fqdn <> '';
CREATE INDEX traces_tools ON traces USING gin (tools jsonb_path_ops);

CREATE TABLE client_tools (
    org          text NOT NULL,
    project      text NOT NULL,
    client_id    text NOT NULL,
    tool_id      text NOT NULL,
    description  text NOT NULL DEFAULT '',
    input_schema jsonb,
    reported_at  timestamptz NOT NULL,
    PRIMARY KEY (org, project, client_id, tool_id)
);
CREATE INDEX client_tools_tool ON client_tools (org, project, tool_id);
