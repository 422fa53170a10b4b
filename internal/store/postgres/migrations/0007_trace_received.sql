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
