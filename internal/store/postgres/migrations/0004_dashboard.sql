-- Per-minute rollups of each tenant's traces for the dashboard
-- (docs/dashboard.md); its reads are ranges of these primary keys.
CREATE TABLE dash_minutes (
    org        text NOT NULL,
    project    text NOT NULL,
    minute     timestamptz NOT NULL,
    executions bigint NOT NULL,
    errors     bigint NOT NULL,
    PRIMARY KEY (org, project, minute)
);
CREATE TABLE dash_latency (
    org     text NOT NULL,
    project text NOT NULL,
    minute  timestamptz NOT NULL,
    bucket  bigint NOT NULL,
    n       bigint NOT NULL,
    PRIMARY KEY (org, project, minute, bucket)
);
CREATE TABLE dash_errors (
    org     text NOT NULL,
    project text NOT NULL,
    minute  timestamptz NOT NULL,
    code    text NOT NULL,
    n       bigint NOT NULL,
    PRIMARY KEY (org, project, minute, code)
);
CREATE TABLE dash_tools (
    org      text NOT NULL,
    project  text NOT NULL,
    minute   timestamptz NOT NULL,
    tool     text NOT NULL,
    calls    bigint NOT NULL,
    errors   bigint NOT NULL,
    total_ms double precision NOT NULL,
    max_ms   double precision NOT NULL,
    PRIMARY KEY (org, project, minute, tool)
);
