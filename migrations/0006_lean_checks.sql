-- 0006: a lean write path (issue #16).  A stored check was one checks row
-- plus a findings row per finding (11 for a typical config, 6 of them
-- info) in two indexes, each row and entry repeating the 26-character
-- check id; a commit touched a page per rule.  Now:
--
--   checks       one row per check, with an integer key (seq) that sorts
--                like the public id; the small columns first, then the
--                findings as one compact column, then context, report and
--                config, so the list and stats queries read the row's
--                first page only;
--   check_rules  the distinct error and warning rules of each check
--                (what the rule filter of GET /v1/checks matches), keyed
--                (team, rule, seq) WITHOUT ROWID: one small entry each;
--   rules        rule ids as small integers.
--
-- Every stored check and finding is kept: findings move into
-- checks.findings as [[rule, severity, line], ...] (severity 0 error, 1
-- warning, 2 info; rule a rules.id), and seq numbers the existing checks
-- in id order, below every seq a new id gets (server/store_sqlite.c).
-- Applied with foreign keys off (diagnoses refer to checks by id, and
-- dropping the old table must not cascade), then checked by
-- PRAGMA foreign_key_check before the commit.

CREATE TABLE rules (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE	-- "schema.duplicate_key"
);
INSERT INTO rules (name) SELECT DISTINCT rule FROM findings ORDER BY rule;

CREATE TABLE checks_lean (
	seq INTEGER PRIMARY KEY,	-- internal; sorts like id
	id TEXT NOT NULL UNIQUE,	-- public 26-char time-sortable id
	team TEXT NOT NULL,
	name TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,	-- Unix milliseconds
	verdict TEXT NOT NULL CHECK (verdict IN ('pass', 'warn', 'fail')),
	errors INTEGER NOT NULL,
	warnings INTEGER NOT NULL,
	infos INTEGER NOT NULL,
	config_sha256 TEXT NOT NULL,
	body_sha256 TEXT NOT NULL,	-- of the request body (idempotency)
	idem_key TEXT,			-- Idempotency-Key, if one was sent
	findings TEXT NOT NULL DEFAULT '[]',	-- [[rule, severity, line]]
	context TEXT NOT NULL,		-- context object, JSON
	report TEXT NOT NULL,		-- the stored check as served, JSON
	config BLOB NOT NULL		-- the submitted config bytes
);

INSERT INTO checks_lean (seq, id, team, name, created_at, verdict, errors,
    warnings, infos, config_sha256, body_sha256, idem_key, findings,
    context, report, config)
SELECT row_number() OVER (ORDER BY c.id), c.id, c.team, c.name,
    c.created_at, c.verdict, c.errors, c.warnings, c.infos,
    c.config_sha256, c.body_sha256, c.idem_key,
    coalesce((SELECT json_group_array(json_array(r.id,
	CASE f.severity WHEN 'error' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END,
	f.line))
	FROM findings f JOIN rules r ON r.name = f.rule
	WHERE f.check_id = c.id), '[]'),
    c.context, c.report, c.config
FROM checks c ORDER BY c.id;

CREATE TABLE check_rules (
	team TEXT NOT NULL,
	rule INTEGER NOT NULL,		-- rules.id
	seq INTEGER NOT NULL,		-- checks.seq
	PRIMARY KEY (team, rule, seq)
) WITHOUT ROWID;
INSERT OR IGNORE INTO check_rules (team, rule, seq)
SELECT c.team, r.id, c.seq FROM findings f
JOIN checks_lean c ON c.id = f.check_id JOIN rules r ON r.name = f.rule
WHERE f.severity <> 'info';

DROP TABLE findings;
DROP TABLE checks;
ALTER TABLE checks_lean RENAME TO checks;

-- Lists per team and histories walk these from the cursor down; ids
-- begin with their time, so since/until and retention are id ranges.
CREATE INDEX checks_team_id ON checks (team, id);
CREATE INDEX checks_team_name_id ON checks (team, name, id);
CREATE UNIQUE INDEX checks_team_idem ON checks (team, idem_key)
	WHERE idem_key IS NOT NULL;

-- Whatever deletes a check (retention, an operator) takes its rule
-- entries in the same statement; diagnoses go by their foreign key.
CREATE TRIGGER checks_delete_rules AFTER DELETE ON checks BEGIN
	DELETE FROM check_rules WHERE team = old.team AND seq = old.seq AND
	    rule IN (SELECT value ->> 0 FROM json_each(old.findings)
	    WHERE value ->> 1 < 2);
END;
