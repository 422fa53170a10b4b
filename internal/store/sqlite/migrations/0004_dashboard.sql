-- Per-minute rollups of each tenant's traces for the dashboard
-- (docs/dashboard.md); its reads are ranges of these primary keys.
CREATE TABLE dash_minutes (
    org        TEXT NOT NULL,
    project    TEXT NOT NULL,
    minute     TEXT NOT NULL,
    executions INTEGER NOT NULL,
    errors     INTEGER NOT NULL,
    PRIMARY KEY (org, project, minute)
);
CREATE TABLE dash_latency (
    org     TEXT NOT NULL,
    project TEXT NOT NULL,
    minute  TEXT NOT NULL,
    bucket  INTEGER NOT NULL,
    n       INTEGER NOT NULL,
    PRIMARY KEY (org, project, minute, bucket)
);
CREATE TABLE dash_errors (
    org     TEXT NOT NULL,
    project TEXT NOT NULL,
    minute  TEXT NOT NULL,
    code    TEXT NOT NULL,
    n       INTEGER NOT NULL,
    PRIMARY KEY (org, project, minute, code)
);
CREATE TABLE dash_tools (
    org      TEXT NOT NULL,
    project  TEXT NOT NULL,
    minute   TEXT NOT NULL,
    tool     TEXT NOT NULL,
    calls    INTEGER NOT NULL,
    errors   INTEGER NOT NULL,
    total_ms REAL NOT NULL,
    max_ms   REAL NOT NULL,
    PRIMARY KEY (org, project, minute, tool)
);
