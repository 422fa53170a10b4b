-- caller names who ran or sent a trace: "key:ID" or "oidc:HOST:SUBJECT"
-- (docs/auth.md); traces can be filtered by it.
ALTER TABLE traces ADD COLUMN caller text NOT NULL DEFAULT '';
CREATE INDEX traces_caller ON traces (org, project, caller, started_at DESC) WHERE caller <> '';
