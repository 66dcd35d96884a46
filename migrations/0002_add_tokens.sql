-- 0002: API tokens.  Only a token's SHA-256 is stored; the token itself is
-- shown once, by `preflight token create`.

CREATE TABLE tokens (
	id INTEGER PRIMARY KEY,
	team TEXT NOT NULL,
	admin INTEGER NOT NULL DEFAULT 0 CHECK (admin IN (0, 1)),
	token_sha256 TEXT NOT NULL UNIQUE,	-- hex SHA-256 of the token
	created_at INTEGER NOT NULL,		-- Unix milliseconds
	revoked_at INTEGER			-- NULL while valid
);
