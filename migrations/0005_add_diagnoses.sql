-- 0005: diagnoses of failed runs (issue #19), each stored with the check
-- of the config that ran, so a config's history shows how it failed, and
-- the measured peak of a CUDA OOM that the estimator can be held against.

CREATE TABLE diagnoses (
	id TEXT NOT NULL UNIQUE,	-- 26-char time-sortable id
	created_at INTEGER NOT NULL,	-- Unix milliseconds
	team TEXT NOT NULL,
	-- The check it belongs to; retention deletes them together.
	check_id TEXT NOT NULL REFERENCES checks (id) ON DELETE CASCADE,
	name TEXT NOT NULL DEFAULT '',	-- the config's name
	config_sha256 TEXT NOT NULL,
	gpu TEXT NOT NULL,		-- context GPU id
	context TEXT NOT NULL,		-- context object, JSON
	first TEXT,			-- first diagnosis id, NULL: none known
	measured_peak_gib REAL,		-- what the failed step needed, at
					-- least; NULL without a CUDA OOM
	capacity_gib REAL,		-- the device's, from the same message
	lines TEXT NOT NULL,		-- JSON [{line, text}] it rests on
	report TEXT NOT NULL		-- the diagnosis as served, JSON
);

-- Per team, newest first; measurements are the rows with a peak.
CREATE INDEX diagnoses_team_id ON diagnoses (team, id);
CREATE INDEX diagnoses_team_measured ON diagnoses (team, id)
	WHERE measured_peak_gib IS NOT NULL;
-- Cascading deletes from checks.
CREATE INDEX diagnoses_check ON diagnoses (check_id);
