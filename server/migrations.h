/*
 * server/migrations: the SQL files of migrations/, embedded at build time
 * by server/embed_sql.sh into build/gen/migrations.c.
 */
#ifndef SERVER_MIGRATIONS_H
#define SERVER_MIGRATIONS_H

struct migration {
	int version;		/* 1, 2, ... without gaps */
	const char *name;	/* "0001_init.sql" */
	const char *sql;	/* the whole file */
};

extern const struct migration migrations[];
extern const int migrations_count;

#endif /* SERVER_MIGRATIONS_H */
