-- Learning from use (docs/how-it-works.md "Discover and the tool graph"):
-- a discover waits, for a while, for the runs of the same caller that
-- follow it (each tenant keeps its most recent ones), and what each family
-- of a tenant's queries learned of each tool (its most recently updated
-- rows). A gain decays from updated_at on.
CREATE TABLE seen_discovers (
    id         bigserial PRIMARY KEY,
    org        text NOT NULL,
    project    text NOT NULL,
    caller     text NOT NULL,
    family     text NOT NULL,
    shown      jsonb NOT NULL,
    seen_at    timestamptz NOT NULL
);
CREATE INDEX seen_discovers_caller ON seen_discovers (org, project, caller, seen_at);
CREATE INDEX seen_discovers_recent ON seen_discovers (org, project, seen_at);

CREATE TABLE tool_relevance (
    org        text NOT NULL,
    project    text NOT NULL,
    family     text NOT NULL,
    tool_id    text NOT NULL,
    gain       double precision NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (org, project, family, tool_id)
);
CREATE INDEX tool_relevance_recent ON tool_relevance (org, project, updated_at);
