-- intent_runs counts the learned runs of a capability's shape whose intent
-- was the one it was learned for (its description, in any case): a habit
-- (docs/how-it-works.md "Discover and the tool graph"). A shape two
-- different tasks happen to share counts a use for each, but only one of
-- them is its own. Rows learned before count every run, as they did.
ALTER TABLE capabilities ADD COLUMN intent_runs bigint NOT NULL DEFAULT 1;
UPDATE capabilities SET intent_runs = usage_count;
