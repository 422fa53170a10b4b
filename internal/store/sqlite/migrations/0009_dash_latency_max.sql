-- The slowest execution of each latency bucket's minute, so that the
-- dashboard's percentiles, interpolated within a bucket, never exceed a
-- run that was observed (docs/dashboard.md). Rows written before it have
-- 0: unknown.
ALTER TABLE dash_latency ADD COLUMN max_ms REAL NOT NULL DEFAULT 0;
