-- received_at is when the gateway received a trace, by its own clock:
-- retention keeps each tenant's newest traces by it, not by the started_at
-- a package wrote (docs/limits.md "What a posted trace may say"). Traces
-- stored before get their start, or now when that is in the future; rollups
-- of future minutes, which only such a start could write, go.
ALTER TABLE traces ADD COLUMN received_at timestamptz NOT NULL DEFAULT now();
UPDATE traces SET received_at = LEAST(started_at, now());
CREATE INDEX traces_received ON traces (org, project, received_at DESC, id DESC);
DELETE FROM dash_minutes WHERE minute > now() + interval '5 minutes';
DELETE FROM dash_latency WHERE minute > now() + interval '5 minutes';
DELETE FROM dash_errors WHERE minute > now() + interval '5 minutes';
DELETE FROM dash_tools WHERE minute > now() + interval '5 minutes';

-- Hourly rollups of error codes and tools (docs/dashboard.md): the day and
-- the week read whole hours here and only the partial first hour from the
-- minute tables, so a read costs at most its hours times the codes and
-- tools an hour may hold (store.MaxDashToolsPerHour), whatever a tenant
-- posted. Filled from the minute tables: codes outside the wire contract's
-- as UNKNOWN, an hour's tools past its 63 most called as '*'.
CREATE TABLE dash_errors_hour (
    org     text NOT NULL,
    project text NOT NULL,
    minute  timestamptz NOT NULL,
    code    text NOT NULL,
    n       bigint NOT NULL,
    PRIMARY KEY (org, project, minute, code)
);
CREATE TABLE dash_tools_hour (
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
CREATE INDEX dash_errors_hour_minute ON dash_errors_hour (minute);
CREATE INDEX dash_tools_hour_minute ON dash_tools_hour (minute);
INSERT INTO dash_errors_hour (org, project, minute, code, n)
SELECT org, project, date_trunc('hour', minute),
    CASE WHEN code IN ('EMPTY_CODE', 'CODE_TOO_LARGE', 'SYNTAX_ERROR', 'CLIENT_TOOLS_REQUIRE_PACKAGE', 'UNKNOWN_TOOL', 'PERMISSION_DENIED', 'EXECUTION_TIMEOUT', 'CANCELLED', 'RPC_TIMEOUT', 'MEMORY_LIMIT', 'CODE_ERROR', 'TOOL_ERROR', 'NETWORK_ERROR', 'WORKFLOW_NOT_FOUND', 'INTEGRITY_ERROR', 'UNAUTHORIZED', 'INVALID_REQUEST', 'INVALID_CONFIG', 'API_KEY_REQUIRED', 'NAMESPACE_RESERVED', 'OVERLOADED', 'ELICITATION_REQUIRED', 'INTERNAL_ERROR', 'UNKNOWN') THEN code ELSE 'UNKNOWN' END, sum(n)
FROM dash_errors GROUP BY 1, 2, 3, 4;
INSERT INTO dash_tools_hour (org, project, minute, tool, calls, errors, total_ms, max_ms)
SELECT org, project, hour, CASE WHEN rk < 64 THEN tool ELSE '*' END, sum(calls), sum(errors), sum(total_ms), max(max_ms)
FROM (SELECT org, project, hour, tool, calls, errors, total_ms, max_ms,
        row_number() OVER (PARTITION BY org, project, hour ORDER BY CASE WHEN tool = '*' THEN 1 ELSE 0 END, calls DESC, tool) AS rk
    FROM (SELECT org, project, date_trunc('hour', minute) AS hour, tool, sum(calls) AS calls, sum(errors) AS errors,
            sum(total_ms) AS total_ms, max(max_ms) AS max_ms
        FROM dash_tools GROUP BY 1, 2, 3, 4) h) r
GROUP BY 1, 2, 3, 4;
