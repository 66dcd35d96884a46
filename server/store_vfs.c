/*
 * server/store_vfs: a SQLite VFS that forwards every call to the default
 * VFS (the one in force when the store first asks for it) and counts the
 * syncs and the bytes written, so /metrics and `make bench` can say what
 * a stored check costs the disk (issue #16).  Process-wide: the counters
 * are atomics and the VFS is registered once, not as the default.
 */
#include "server/store_int.h"

#include <stdatomic.h>
#include <string.h>

#include <sqlite3.h>

struct count_file {
	sqlite3_file base;
	sqlite3_file *real;	/* right after this struct */
};

static sqlite3_vfs *real_vfs;
static sqlite3_vfs count_vfs;
static atomic_llong n_syncs;
static atomic_llong n_bytes;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool registered;

static sqlite3_file *
real(sqlite3_file *f)
{
	return ((struct count_file *)f)->real;
}

static int
c_close(sqlite3_file *f)
{
	return real(f)->pMethods->xClose(real(f));
}

static int
c_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
	return real(f)->pMethods->xRead(real(f), buf, n, off);
}

static int
c_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
	int rc = real(f)->pMethods->xWrite(real(f), buf, n, off);

	if (rc == SQLITE_OK)
		atomic_fetch_add(&n_bytes, n);
	return rc;
}

static int
c_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	return real(f)->pMethods->xTruncate(real(f), size);
}

static int
c_sync(sqlite3_file *f, int flags)
{
	atomic_fetch_add(&n_syncs, 1);
	return real(f)->pMethods->xSync(real(f), flags);
}

static int
c_size(sqlite3_file *f, sqlite3_int64 *out)
{
	return real(f)->pMethods->xFileSize(real(f), out);
}

static int
c_lock(sqlite3_file *f, int level)
{
	return real(f)->pMethods->xLock(real(f), level);
}

static int
c_unlock(sqlite3_file *f, int level)
{
	return real(f)->pMethods->xUnlock(real(f), level);
}

static int
c_check_lock(sqlite3_file *f, int *out)
{
	return real(f)->pMethods->xCheckReservedLock(real(f), out);
}

static int
c_fcntl(sqlite3_file *f, int op, void *arg)
{
	return real(f)->pMethods->xFileControl(real(f), op, arg);
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
	return real(f)->pMethods->xShmLock(real(f), off, n, flags);
}

static void
c_shm_barrier(sqlite3_file *f)
{
	real(f)->pMethods->xShmBarrier(real(f));
}

static int
c_shm_unmap(sqlite3_file *f, int del)
{
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
	c->real = (sqlite3_file *)(c + 1);
	rc = real_vfs->xOpen(real_vfs, name, c->real, flags, out);
	/* A file whose open failed gets no methods, so it is not closed. */
	c->base.pMethods = rc == SQLITE_OK && c->real->pMethods != NULL ?
	    &count_methods : NULL;
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
