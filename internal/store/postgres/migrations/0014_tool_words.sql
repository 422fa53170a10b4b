-- What a tenant's runs teach discover (docs/how-it-works.md "Discover and
-- the tool graph"): the words of each successful run's intent (and of the
-- discover that led to it) as words of each tool the run used. weight
-- grows by each run (one statement: runs on two replicas both count) and
-- decays from updated_at when read. shared marks a row that counts toward
-- the global layer (a tool every tenant sees, a tenant that has not opted
-- out), which counts the distinct orgs of each word and tool.
CREATE TABLE tool_words (
    org        TEXT NOT NULL,
    project    TEXT NOT NULL,
    tool_id    TEXT NOT NULL,
    word       TEXT NOT NULL,
    weight     REAL NOT NULL,
    shared     BOOLEAN NOT NULL DEFAULT false,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (org, project, tool_id, word)
);
CREATE INDEX tool_words_recent ON tool_words (org, project, updated_at);
CREATE INDEX tool_words_shared ON tool_words (org, updated_at) WHERE shared;
