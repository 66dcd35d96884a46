/*
 * server/store_vfs: a SQLite VFS over the default VFS (the one in force
 * when the store first asks for it) that counts the syncs and the bytes
 * written, so /metrics and `make bench` can say what a stored check costs
 * the disk, and gives the kernel fewer, larger writes (issue #16).
 * Process-wide: the counters are atomics and the VFS is registered once,
 * not as the default.
 *
 * Fewer writes.  SQLite writes a WAL frame as two writes (its 24-byte
 * header, then the page) and a checkpoint one page at a time; on ext4
 * each of those is a syscall with its own page-cache walk, which was most
 * of the writer's and the checkpointer's time (docs/performance.md
 * section 4).  So the WAL and the database file keep a run of writes that
 * each start where the previous write on that file ended, and write it
 * with one call:
 *   - a WAL run is written when its commit frame's page is in (a frame
 *     header whose "database size" field is not 0 marks a commit), so a
 *     transaction is one write and is in the file before SQLite makes it
 *     visible in the wal-index (it does that after its frame writes
 *     return); also
 *   - before any other call on that file (read, sync, truncate, size,
 *     locks, file controls -- a checkpoint ends with
 *     SQLITE_FCNTL_CKPT_DONE, before it publishes what it copied), before
 *     a write that does not continue the run, and at BUF_MAX bytes; and
 *   - when any connection of the process releases the WAL write lock
 *     (xShmLock), so frames of a transaction that rolled back never sit
 *     in memory while another writer, of this process or another, may
 *     write the WAL.
 * Only a write that continues the previous one is held: SQLite's
 * rewrites of earlier frames (checksums after a page was written twice
 * in one transaction) go straight through.  Crash safety is unchanged:
 * everything SQLite wrote is in the kernel before COMMIT returns, and a
 * sync (synchronous=FULL) writes the run first.
 *
 * Fewer reads.  A checkpoint reads the WAL one page per call; between
 * SQLITE_FCNTL_CKPT_START and CKPT_DONE (on the same thread) the frames
 * it reads are committed and cannot change, so its WAL reads come from a
 * RA_SIZE read-ahead that lives for that pass only.
 *
 * No write-back bursts.  Nothing asks the kernel to write the WAL out
 * until a checkpoint pass syncs it (every 16 MiB of WAL, in NORMAL
 * mode), and writing 16 MiB out at once made the writer's WAL writes
 * wait behind it: 2-5 ms pwrites once per pass, a p99 of 20-30 ms at 4
 * connections where the dry run's was 1-2 ms (perf trace; with the
 * checkpointer off the p99 was 1.3-2.1 ms).  So every WB_STEP
 * bytes written to the WAL or the database start their write-back at
 * once (sync_file_range SYNC_FILE_RANGE_WRITE, which does not wait and
 * promises nothing), and a checkpoint's syncs find little left to do.
 * Durability is what synchronous says, as before.
 */
#define _GNU_SOURCE		/* sync_file_range (Linux, as the project) */
#include "server/store_int.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

/* Bytes held at most before writing: under 128 KiB, because the unix
   VFS writes at most 0x1ffff bytes per call (os_unix.c seekAndWriteFd
   masks the length; a longer write comes back short, as SQLITE_FULL). */
#define BUF_MAX (124 << 10)
#define RA_SIZE (64 << 10)	/* a checkpoint's WAL read-ahead */
#define WB_STEP (512 << 10)	/* bytes written between write-back starts */
#define WAL_FRAME_HDR 24	/* bytes of a WAL frame header */
#define WAL_WRITE_LOCK 0	/* SQLite's shm lock slot of the writer */

/* What the last write held on a WAL file says about the next one. */
enum wal_state {
	W_NONE,			/* nothing: a page now is not a frame's */
	W_HEADER,		/* a frame header: its page comes next */
	W_COMMIT		/* a commit frame's header: write the run
				   once its page is in */
};

struct count_file {
	sqlite3_file base;
	sqlite3_file *real;	/* right after this struct */
	char *ra;		/* -wal read ahead during a checkpoint: */
	sqlite3_int64 ra_off;	/* ra_len bytes of the file at ra_off, */
	size_t ra_len;
	unsigned ra_gen;	/* valid in the pass of this number */
	bool wal;		/* the -wal file */
	bool coalesce;		/* the -wal or the main database file */
	enum wal_state state;	/* of the -wal file */
	char *buf;		/* the run held: len bytes at off */
	size_t len;
	size_t cap;
	sqlite3_int64 off;
	sqlite3_int64 next;	/* where the last write ended; -1: none */
	int wb_fd;		/* the file again, for sync_file_range; -1:
				   none (not the -wal or the main database,
				   or it could not be opened) */
	sqlite3_int64 wb_bytes;	/* bytes written since the last start, */
	sqlite3_int64 wb_from;	/* spanning [wb_from, wb_to) */
	sqlite3_int64 wb_to;
};

static sqlite3_vfs *real_vfs;
static sqlite3_vfs count_vfs;
static atomic_llong n_syncs;
static atomic_llong n_bytes;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool registered;
/* The WAL file that holds a run (there is at most one: only the holder
   of the WAL write lock writes frames), for the flush at its release. */
static pthread_mutex_t wal_mu = PTHREAD_MUTEX_INITIALIZER;
static struct count_file *wal_held;
/* This thread is copying the WAL into the database (between
   SQLITE_FCNTL_CKPT_START and CKPT_DONE on its database file): the frames
   it reads are committed and cannot change until it is done, so its WAL
   reads are served from a read-ahead buffer valid for that one pass. */
static atomic_uint ckpt_passes;	/* numbers every pass, process-wide */
static _Thread_local bool in_ckpt;
static _Thread_local unsigned ckpt_gen;	/* this thread's pass */

static sqlite3_file *
real(sqlite3_file *f)
{
	return ((struct count_file *)f)->real;
}

/*
 * Bytes [off, off + n) of the -wal or the database were written: once
 * WB_STEP bytes were written since the last start, start the write-back
 * of the range they span (see the top; pages already clean cost
 * nothing).
 */
static void
wb_written(struct count_file *c, sqlite3_int64 off, sqlite3_int64 n)
{
	if (c->wb_fd < 0)
		return;
	if (c->wb_bytes == 0 || off < c->wb_from)
		c->wb_from = off;
	if (c->wb_bytes == 0 || off + n > c->wb_to)
		c->wb_to = off + n;
	c->wb_bytes += n;
	if (c->wb_bytes < WB_STEP)
		return;
	(void)sync_file_range(c->wb_fd, c->wb_from, c->wb_to - c->wb_from,
	    SYNC_FILE_RANGE_WRITE);
	c->wb_bytes = 0;
}

/* Write c's run, if any; SQLITE_OK or the real write's code (the run is
   dropped either way: SQLite fails the transaction or checkpoint). */
static int
flush(struct count_file *c)
{
	int rc = SQLITE_OK;

	if (c->len == 0)
		return SQLITE_OK;
	rc = c->real->pMethods->xWrite(c->real, c->buf, (int)c->len, c->off);
	if (rc == SQLITE_OK) {
		atomic_fetch_add(&n_bytes, (long long)c->len);
		wb_written(c, c->off, (sqlite3_int64)c->len);
	}
	c->len = 0;
	if (c->wal) {
		pthread_mutex_lock(&wal_mu);
		if (wal_held == c)
			wal_held = NULL;
		pthread_mutex_unlock(&wal_mu);
	}
	return rc;
}

static int
write_through(struct count_file *c, const void *buf, int n,
    sqlite3_int64 off)
{
	int rc = c->real->pMethods->xWrite(c->real, buf, n, off);

	if (rc == SQLITE_OK) {
		atomic_fetch_add(&n_bytes, n);
		wb_written(c, off, n);
	}
	return rc;
}

static int
flush_file(sqlite3_file *f)
{
	return flush((struct count_file *)f);
}

/* Append n bytes to c's run (the caller checked that they continue it
   and fit); -1 when out of memory (then write them through). */
static int
hold(struct count_file *c, const void *buf, size_t n, sqlite3_int64 off)
{
	if (c->len + n > c->cap) {
		size_t cap = BUF_MAX;
		char *nb;

		nb = realloc(c->buf, cap);
		if (nb == NULL)
			return -1;
		c->buf = nb;
		c->cap = cap;
	}
	if (c->len == 0) {
		c->off = off;
		if (c->wal) {
			pthread_mutex_lock(&wal_mu);
			wal_held = c;
			pthread_mutex_unlock(&wal_mu);
		}
	}
	memcpy(c->buf + c->len, buf, n);
	c->len += n;
	return 0;
}

static int
c_close(sqlite3_file *f)
{
	struct count_file *c = (struct count_file *)f;
	int rc = flush(c), rc2;

	free(c->buf);
	free(c->ra);
	c->buf = c->ra = NULL;
	c->cap = c->ra_len = 0;
	if (c->wb_fd >= 0)
		close(c->wb_fd);
	c->wb_fd = -1;
	rc2 = c->real->pMethods->xClose(c->real);
	return rc != SQLITE_OK ? rc : rc2;
}

/*
 * A checkpoint's WAL read (page by page, in page order, which for pages
 * appended since the last pass is the WAL's order): from the read-ahead
 * buffer, refilled RA_SIZE bytes at a time.  1 when served, 0 when the
 * caller should read as usual (near the file's end, out of memory).
 */
static int
ra_read(struct count_file *c, void *buf, int n, sqlite3_int64 off)
{
	if (c->ra_gen != ckpt_gen || off < c->ra_off ||
	    off + n > c->ra_off + (sqlite3_int64)c->ra_len) {
		c->ra_len = 0;
		if (c->ra == NULL && (c->ra = malloc(RA_SIZE)) == NULL)
			return 0;
		if (c->real->pMethods->xRead(c->real, c->ra, RA_SIZE, off) !=
		    SQLITE_OK)
			return 0;	/* short (the end) or failed */
		c->ra_off = off;
		c->ra_len = RA_SIZE;
		c->ra_gen = ckpt_gen;
	}
	memcpy(buf, c->ra + (off - c->ra_off), (size_t)n);
	return 1;
}

static int
c_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
	struct count_file *c = (struct count_file *)f;
	int rc = flush(c);

	if (rc != SQLITE_OK)
		return rc;
	if (c->wal && in_ckpt && n > 0 && n <= RA_SIZE / 4 &&
	    ra_read(c, buf, n, off))
		return SQLITE_OK;
	return c->real->pMethods->xRead(c->real, buf, n, off);
}

/*
 * A WAL write joins the run when it continues it (or, with no run, the
 * previous write, or it is the WAL header at 0) and is a frame header,
 * the WAL header, or the page after a non-commit header; the page of a
 * commit frame, and anything else that continues the run, is appended
 * and the run written.  So nothing is held once a commit's frames are
 * written, and nothing is held that does not continue the WAL's end.
 */
static int
wal_write(struct count_file *c, const void *buf, int n, sqlite3_int64 off)
{
	const unsigned char *h = buf;
	enum wal_state was = c->state;
	bool cont = c->len > 0 ? off == c->off + (sqlite3_int64)c->len :
	    off == c->next || (off == 0 && n == 32);
	bool page = n >= 512 && (n & (n - 1)) == 0;
	int rc;

	c->state = W_NONE;
	c->next = off + n;
	if (!cont || c->len + (size_t)n > BUF_MAX) {
		rc = flush(c);
		if (rc != SQLITE_OK)
			return rc;
		if (!cont || n > BUF_MAX || (n != WAL_FRAME_HDR && n != 32))
			return write_through(c, buf, n, off);
	}
	if (hold(c, buf, (size_t)n, off) != 0) {
		rc = flush(c);
		return rc != SQLITE_OK ? rc : write_through(c, buf, n, off);
	}
	if (n == WAL_FRAME_HDR)
		/* Bytes 4-7: the database size in pages after a commit,
		   0 in other frames. */
		c->state = (h[4] | h[5] | h[6] | h[7]) != 0 ? W_COMMIT :
		    W_HEADER;
	else if (n == 32 && off == 0)
		c->state = W_NONE;	/* the WAL header: a frame follows */
	else if (!(was == W_HEADER && page))
		return flush(c);
	return SQLITE_OK;
}

/* A database file write joins the run when it continues it; any other
   call on the file writes the run first. */
static int
db_write(struct count_file *c, const void *buf, int n, sqlite3_int64 off)
{
	int rc;

	if (c->len > 0 && (off != c->off + (sqlite3_int64)c->len ||
	    c->len + (size_t)n > BUF_MAX)) {
		rc = flush(c);
		if (rc != SQLITE_OK)
			return rc;
	}
	if (n > BUF_MAX || hold(c, buf, (size_t)n, off) != 0) {
		rc = flush(c);
		return rc != SQLITE_OK ? rc : write_through(c, buf, n, off);
	}
	return SQLITE_OK;
}

static int
c_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
	struct count_file *c = (struct count_file *)f;

	if (c->wal)
		return wal_write(c, buf, n, off);
	if (c->coalesce)
		return db_write(c, buf, n, off);
	return write_through(c, buf, n, off);
}

static int
c_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	int rc = flush_file(f);

	return rc != SQLITE_OK ? rc :
	    real(f)->pMethods->xTruncate(real(f), size);
}

static int
c_sync(sqlite3_file *f, int flags)
{
	int rc = flush_file(f);

	if (rc != SQLITE_OK)
		return rc;
	atomic_fetch_add(&n_syncs, 1);
	return real(f)->pMethods->xSync(real(f), flags);
}

static int
c_size(sqlite3_file *f, sqlite3_int64 *out)
{
	int rc = flush_file(f);

	return rc != SQLITE_OK ? rc :
	    real(f)->pMethods->xFileSize(real(f), out);
}

static int
c_lock(sqlite3_file *f, int level)
{
	int rc = flush_file(f);

	return rc != SQLITE_OK ? rc : real(f)->pMethods->xLock(real(f),
	    level);
}

static int
c_unlock(sqlite3_file *f, int level)
{
	int rc = flush_file(f);

	return rc != SQLITE_OK ? rc : real(f)->pMethods->xUnlock(real(f),
	    level);
}

static int
c_check_lock(sqlite3_file *f, int *out)
{
	int rc = flush_file(f);

	return rc != SQLITE_OK ? rc :
	    real(f)->pMethods->xCheckReservedLock(real(f), out);
}

static int
c_fcntl(sqlite3_file *f, int op, void *arg)
{
	int rc = flush_file(f);

	/* No read-ahead outlives its pass: each pass has its own number. */
	if (op == SQLITE_FCNTL_CKPT_START) {
		in_ckpt = true;
		ckpt_gen = atomic_fetch_add(&ckpt_passes, 1) + 1;
	} else if (op == SQLITE_FCNTL_CKPT_DONE) {
		in_ckpt = false;
	}

	return rc != SQLITE_OK ? rc :
	    real(f)->pMethods->xFileControl(real(f), op, arg);
}

static int
c_sector(sqlite3_file *f)
{
	return real(f)->pMethods->xSectorSize(real(f));
}

static int
c_devchar(sqlite3_file *f)
{
	return real(f)->pMethods->xDeviceCharacteristics(real(f));
}

static int
c_shm_map(sqlite3_file *f, int pg, int sz, int extend, void volatile **pp)
{
	return real(f)->pMethods->xShmMap(real(f), pg, sz, extend, pp);
}

static int
c_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
	int rc = flush_file(f);

	if (rc != SQLITE_OK)
		return rc;
	/* Releasing the WAL write lock: no frame stays held (see the top;
	   a failed write here only loses frames that were not committed). */
	if ((flags & SQLITE_SHM_UNLOCK) && (flags & SQLITE_SHM_EXCLUSIVE) &&
	    off <= WAL_WRITE_LOCK && WAL_WRITE_LOCK < off + n) {
		struct count_file *held;

		pthread_mutex_lock(&wal_mu);
		held = wal_held;
		pthread_mutex_unlock(&wal_mu);
		if (held != NULL)
			(void)flush(held);
	}
	return real(f)->pMethods->xShmLock(real(f), off, n, flags);
}

static void
c_shm_barrier(sqlite3_file *f)
{
	(void)flush_file(f);
	real(f)->pMethods->xShmBarrier(real(f));
}

static int
c_shm_unmap(sqlite3_file *f, int del)
{
	(void)flush_file(f);
	return real(f)->pMethods->xShmUnmap(real(f), del);
}

/* Version 2: the shared-memory methods WAL needs, no memory mapping. */
static const sqlite3_io_methods count_methods = {
	2, c_close, c_read, c_write, c_truncate, c_sync, c_size, c_lock,
	c_unlock, c_check_lock, c_fcntl, c_sector, c_devchar, c_shm_map,
	c_shm_lock, c_shm_barrier, c_shm_unmap, NULL, NULL
};

static int
v_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags,
    int *out)
{
	struct count_file *c = (struct count_file *)f;
	int rc;

	(void)vfs;
	memset(c, 0, sizeof(*c));
	c->real = (sqlite3_file *)(c + 1);
	c->wal = (flags & SQLITE_OPEN_WAL) != 0;
	c->coalesce = (flags & (SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_DB)) != 0;
	c->next = -1;
	c->wb_fd = -1;
	rc = real_vfs->xOpen(real_vfs, name, c->real, flags, out);
	/* A file whose open failed gets no methods, so it is not closed. */
	c->base.pMethods = rc == SQLITE_OK && c->real->pMethods != NULL ?
	    &count_methods : NULL;
	/* Its own descriptor of the file for the write-back starts (the
	   real VFS does not lend its own); without one, none are made. */
	if (c->base.pMethods != NULL && c->coalesce && name != NULL &&
	    !(flags & SQLITE_OPEN_READONLY))
		c->wb_fd = open(name, O_RDONLY | O_CLOEXEC);
	return rc;
}

static int
v_delete(sqlite3_vfs *v, const char *n, int sync)
{
	(void)v;
	return real_vfs->xDelete(real_vfs, n, sync);
}

static int
v_access(sqlite3_vfs *v, const char *n, int flags, int *out)
{
	(void)v;
	return real_vfs->xAccess(real_vfs, n, flags, out);
}

static int
v_fullname(sqlite3_vfs *v, const char *n, int cap, char *out)
{
	(void)v;
	return real_vfs->xFullPathname(real_vfs, n, cap, out);
}

static int
v_random(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return real_vfs->xRandomness(real_vfs, n, out);
}

static int
v_sleep(sqlite3_vfs *v, int us)
{
	(void)v;
	return real_vfs->xSleep(real_vfs, us);
}

static int
v_time(sqlite3_vfs *v, double *out)
{
	(void)v;
	return real_vfs->xCurrentTime(real_vfs, out);
}

static int
v_last_error(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return real_vfs->xGetLastError(real_vfs, n, out);
}

static int
v_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
	(void)v;
	return real_vfs->xCurrentTimeInt64(real_vfs, out);
}

static void
register_vfs(void)
{
	/* Before the library starts (a no-op after): no process-wide memory
	   statistics, which SQLite keeps under one global mutex taken on
	   every allocation -- of every connection, on every thread; nothing
	   here reads them (sqlite3_memory_used). */
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (sqlite3_initialize() != SQLITE_OK)
		return;
	real_vfs = sqlite3_vfs_find(NULL);
	if (real_vfs == NULL || real_vfs->iVersion < 2)
		return;
	memset(&count_vfs, 0, sizeof(count_vfs));
	count_vfs.iVersion = 2;
	count_vfs.szOsFile = (int)sizeof(struct count_file) +
	    real_vfs->szOsFile;
	count_vfs.mxPathname = real_vfs->mxPathname;
	count_vfs.zName = "preflight-count";
	count_vfs.xOpen = v_open;
	count_vfs.xDelete = v_delete;
	count_vfs.xAccess = v_access;
	count_vfs.xFullPathname = v_fullname;
	count_vfs.xRandomness = v_random;
	count_vfs.xSleep = v_sleep;
	count_vfs.xCurrentTime = v_time;
	count_vfs.xGetLastError = v_last_error;
	count_vfs.xCurrentTimeInt64 = v_time64;
	registered = sqlite3_vfs_register(&count_vfs, 0) == SQLITE_OK;
}

const char *
store_vfs_name(void)
{
	pthread_once(&once, register_vfs);
	return registered ? count_vfs.zName : NULL;
}

void
store_vfs_counts(long long *syncs, long long *bytes)
{
	*syncs = atomic_load(&n_syncs);
	*bytes = atomic_load(&n_bytes);
}
