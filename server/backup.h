/*
 * server/backup: `preflight backup`, an online copy of the database.
 */
#ifndef SERVER_BACKUP_H
#define SERVER_BACKUP_H

/*
 * argv[0] is "backup".  Copies --db to --to with SQLite's backup API
 * (safe while the daemon serves); --force overwrites an existing --to
 * (a restore).  Returns the exit code: 0 done, 1 the copy failed (the
 * target is left as it was), 2 a bad invocation.
 */
int backup_main(int argc, char **argv);

#endif /* SERVER_BACKUP_H */
