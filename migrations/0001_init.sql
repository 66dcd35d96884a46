-- 0001: checks, their findings, and a row readiness probes write to.
-- Applied by store_open() in one transaction; never edited after merge.

CREATE TABLE checks (
	id TEXT NOT NULL UNIQUE,	-- 26-char time-sortable id (ULID-like)
	created_at INTEGER NOT NULL,	-- Unix milliseconds
	team TEXT NOT NULL,
	name TEXT NOT NULL DEFAULT '',
	config_sha256 TEXT NOT NULL,
	verdict TEXT NOT NULL CHECK (verdict IN ('pass', 'warn', 'fail')),
	errors INTEGER NOT NULL,
	warnings INTEGER NOT NULL,
	infos INTEGER NOT NULL,
	context TEXT NOT NULL,		-- context object, JSON
	report TEXT NOT NULL,		-- the stored check as served, JSON
	config BLOB NOT NULL,		-- the submitted config bytes
	idem_key TEXT,			-- Idempotency-Key, if one was sent
	body_sha256 TEXT NOT NULL	-- of the request body
);

-- Ids begin with their creation time in milliseconds, so the UNIQUE index
-- on id also serves since/until filters and retention (as id ranges), and
-- every index below grows at its right edge.
-- Listing per team (admins list through the index on id).
CREATE INDEX checks_team_id ON checks (team, id);
-- History of one config.
CREATE INDEX checks_team_name_id ON checks (team, name, id);
-- One check per (team, Idempotency-Key).
CREATE UNIQUE INDEX checks_team_idem ON checks (team, idem_key)
	WHERE idem_key IS NOT NULL;

CREATE TABLE findings (
	check_id TEXT NOT NULL REFERENCES checks (id) ON DELETE CASCADE,
	rule TEXT NOT NULL,
	severity TEXT NOT NULL,
	line INTEGER NOT NULL,
	team TEXT NOT NULL,		-- copied from the check, for stats
	verdict TEXT NOT NULL		-- the check's verdict, for stats
);

-- Cascading deletes, and rule statistics since a time (a check_id range).
CREATE INDEX findings_check ON findings (check_id);
-- Checks with a finding of a rule.
CREATE INDEX findings_rule_check ON findings (rule, check_id);

-- /readyz proves the database is writable by bumping this row.
CREATE TABLE health (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	beat INTEGER NOT NULL
);
INSERT INTO health (id, beat) VALUES (1, 0);
