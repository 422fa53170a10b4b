-- The retention pass deletes traces by age across every tenant.
CREATE INDEX traces_age ON traces (started_at);
