-- Learning from use (docs/how-it-works.md "Discover and the tool graph"):
-- a discover waits, for a while, for the runs of the same caller that
-- follow it (each tenant keeps its most recent ones), and what each family
-- of a tenant's queries learned of each tool (its most recently updated
-- rows). A gain decays from updated_at on.
CREATE TABLE seen_discovers (
    id         INTEGER PRIMARY KEY,
    org        TEXT NOT NULL,
    project    TEXT NOT NULL,
    caller     TEXT NOT NULL,
    family     TEXT NOT NULL,
    shown      TEXT NOT NULL,
    seen_at    TEXT NOT NULL
);
CREATE INDEX seen_discovers_caller ON seen_discovers (org, project, caller, seen_at);
CREATE INDEX seen_discovers_recent ON seen_discovers (org, project, seen_at);

CREATE TABLE tool_relevance (
    org        TEXT NOT NULL,
    project    TEXT NOT NULL,
    family     TEXT NOT NULL,
    tool_id    TEXT NOT NULL,
    gain       REAL NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (org, project, family, tool_id)
);
CREATE INDEX tool_relevance_recent ON tool_relevance (org, project, updated_at);
