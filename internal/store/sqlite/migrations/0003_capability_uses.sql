-- uses counts the calls of a capability (usage_count counts its saves).
ALTER TABLE capabilities ADD COLUMN uses INTEGER NOT NULL DEFAULT 0;
