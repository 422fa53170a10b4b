-- The global layer of procedural memory (docs/how-it-works.md "The global
-- layer"): shared marks a tenant's edge that counts toward the global
-- graph (both tools are ones every tenant sees, and the tenant has not
-- opted out). The global graph counts the distinct orgs sharing an edge
-- among the most recently updated shared rows, hence the partial index.
ALTER TABLE tool_edges ADD COLUMN shared boolean NOT NULL DEFAULT false;
CREATE INDEX tool_edges_shared ON tool_edges (updated_at) WHERE shared;

-- The output schema inferred for each tool a tenant called successfully:
-- types only, never a value or a key taken from data. Each tenant keeps its
-- most recently updated ones; shared as for tool_edges.
CREATE TABLE tool_types (
    org        text NOT NULL,
    project    text NOT NULL,
    tool_id    text NOT NULL,
    output_schema jsonb NOT NULL,
    shared     boolean NOT NULL DEFAULT false,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (org, project, tool_id)
);
CREATE INDEX tool_types_recent ON tool_types (org, project, updated_at);
CREATE INDEX tool_types_shared ON tool_types (updated_at) WHERE shared;
