-- A renamed capability's old name (docs/how-it-works.md "Learned
-- capabilities"): code and skills written against it keep calling it.
-- Each row points a project's old name at the name it was renamed to.
CREATE TABLE capability_aliases (
    org              TEXT NOT NULL,
    project          TEXT NOT NULL,
    namespace        TEXT NOT NULL,
    action           TEXT NOT NULL,
    target_namespace TEXT NOT NULL,
    target_action    TEXT NOT NULL,
    PRIMARY KEY (org, project, namespace, action)
);
CREATE INDEX capability_aliases_target ON capability_aliases (org, project, target_namespace, target_action);
