-- Approvals of other orgs' skills for clients that talk to the gateway
-- without a package (docs/security.md "Tenants and names"): a kept
-- ("always") approval, bound to one version (its five-part FQDN), and the
-- runs waiting for an approval, continued on any replica.
CREATE TABLE skill_approvals (
    org        TEXT NOT NULL,
    project    TEXT NOT NULL,
    fqdn       TEXT NOT NULL,
    approved_by TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (org, project, fqdn)
);

CREATE TABLE pending_runs (
    id         TEXT NOT NULL,
    org        TEXT NOT NULL,
    project    TEXT NOT NULL,
    payload    TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (org, project, id)
);
CREATE INDEX pending_runs_age ON pending_runs (created_at);
