-- Earshot schema version 3: verify sessions (DESIGN.md 2.1). A verify
-- session carries the credential it checks and an optional MATCH
-- threshold; on SUCCESS it has a score and a decision.

ALTER TABLE sessions ADD COLUMN credential_in TEXT;
ALTER TABLE sessions ADD COLUMN similarity_threshold DOUBLE PRECISION;
ALTER TABLE sessions ADD COLUMN score DOUBLE PRECISION;
ALTER TABLE sessions ADD COLUMN decision TEXT;
