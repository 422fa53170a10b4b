-- Procedural memory (docs/how-it-works.md "Learned capabilities"):
-- output_schema is the union of the types a capability's successful runs
-- returned; recent_runs its last outcomes ('1' success, '0' failure, newest
-- last); params_lifted says its code reads its run's literals from args
-- (capabilities learned before that are served as they are, and lifted at
-- their next run).
ALTER TABLE capabilities ADD COLUMN output_schema TEXT;
ALTER TABLE capabilities ADD COLUMN recent_runs TEXT NOT NULL DEFAULT '';
ALTER TABLE capabilities ADD COLUMN params_lifted INTEGER NOT NULL DEFAULT 0;

-- The tool graph learned from traces, per tenant: feeds counts runs where
-- from_tool's result reached to_tool's arguments, follows runs where
-- from_tool was called before to_tool.
CREATE TABLE tool_edges (
    org        TEXT NOT NULL,
    project    TEXT NOT NULL,
    from_tool  TEXT NOT NULL,
    to_tool    TEXT NOT NULL,
    feeds      INTEGER NOT NULL DEFAULT 0,
    follows    INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (org, project, from_tool, to_tool)
);
