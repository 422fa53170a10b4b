-- The all-tenants dashboard (an operator's) and the pruning of old
-- rollups read by minute alone.
CREATE INDEX dash_minutes_minute ON dash_minutes (minute);
CREATE INDEX dash_latency_minute ON dash_latency (minute);
CREATE INDEX dash_errors_minute ON dash_errors (minute);
CREATE INDEX dash_tools_minute ON dash_tools (minute);
