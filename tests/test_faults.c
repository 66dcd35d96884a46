/*
 * tests/test_faults: what happens when memory or the disk gives out
 * (issue #7 items 2 and 3).
 *
 * - The core under a shrinking arena budget (c-style.md section 10): over
 *   real configs, every budget gives the full report or a clean
 *   ERR_NOMEM, and the smallest budget that works gives the same report.
 * - The store through the API handlers, on a SQLite VFS shim that fails
 *   the n-th write or sync (an I/O error, or SQLITE_FULL for a full disk)
 *   and an allocator shim that fails the n-th SQLite allocation: each
 *   faulted POST answers 503 (never 500, never a 201 for a check that was
 *   not committed), reads keep working, /readyz is 503 while writes fail,
 *   the next request after the fault succeeds, every check that got a
 *   201 is still readable and PRAGMA integrity_check is ok.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "api/api.h"
#include "api/encode.h"
#include "core/arena.h"
#include "core/check.h"
#include "server/store_sqlite.h"
#include "tests/fixture.h"
#include "tests/fixture_api.h"

/* ---- the fault shims ------------------------------------------------ */

enum fault { FAULT_NONE, FAULT_IOERR, FAULT_FULL };

static atomic_int io_mode;		/* enum fault */
static atomic_long io_countdown;	/* writes/syncs left before failing;
					   < 0: fail every one */
static atomic_long mem_countdown = -1;	/* allocations left; -1: off */
static atomic_long io_failed, mem_failed;

/* Whether this write or sync fails. */
static bool
io_fails(void)
{
	long left;

	if (atomic_load(&io_mode) == FAULT_NONE)
		return false;
	left = atomic_fetch_sub(&io_countdown, 1);
	if (left > 0)
		return false;
	atomic_fetch_add(&io_failed, 1);
	return true;
}

static int
io_error(void)
{
	return atomic_load(&io_mode) == FAULT_FULL ? SQLITE_FULL :
	    SQLITE_IOERR_WRITE;
}

struct shim_file {
	sqlite3_file base;
	sqlite3_file *real;	/* right after this struct */
};

static sqlite3_vfs *real_vfs;

static int
s_close(sqlite3_file *f)
{
	struct shim_file *s = (struct shim_file *)f;

	return s->real->pMethods->xClose(s->real);
}

static int
s_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
	struct shim_file *s = (struct shim_file *)f;

	return s->real->pMethods->xRead(s->real, buf, n, off);
}

static int
s_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
	struct shim_file *s = (struct shim_file *)f;

	if (io_fails())
		return io_error();
	return s->real->pMethods->xWrite(s->real, buf, n, off);
}

static int
s_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct shim_file *s = (struct shim_file *)f;

	return s->real->pMethods->xTruncate(s->real, size);
}

static int
s_sync(sqlite3_file *f, int flags)
{
	struct shim_file *s = (struct shim_file *)f;

	if (io_fails())
		return SQLITE_IOERR_FSYNC;
	return s->real->pMethods->xSync(s->real, flags);
}

static int
s_size(sqlite3_file *f, sqlite3_int64 *size)
{
	struct shim_file *s = (struct shim_file *)f;

	return s->real->pMethods->xFileSize(s->real, size);
}

static int
s_lock(sqlite3_file *f, int l)
{
	struct shim_file *s = (struct shim_file *)f;

	return s->real->pMethods->xLock(s->real, l);
}

static int
s_unlock(sqlite3_file *f, int l)
{
	struct shim_file *s = (struct shim_file *)f;

	return s->real->pMethods->xUnlock(s->real, l);
}

static int
s_check_lock(sqlite3_file *f, int *out)
{
	struct shim_file *s = (struct shim_file *)f;

	return s->real->pMethods->xCheckReservedLock(s->real, out);
}

static int
s_fcntl(sqlite3_file *f, int op, void *arg)
{
	struct shim_file *s = (struct shim_file *)f;

	return s->real->pMethods->xFileControl(s->real, op, arg);
}

static int
s_sector(sqlite3_file *f)
{
	struct shim_file *s = (struct shim_file *)f;

	return s->real->pMethods->xSectorSize(s->real);
}

static int
s_devchar(sqlite3_file *f)
{
	struct shim_file *s = (struct shim_file *)f;

	return s->real->pMethods->xDeviceCharacteristics(s->real);
}

static int
s_shm_map(sqlite3_file *f, int pg, int sz, int ext, void volatile **pp)
{
	struct shim_file *s = (struct shim_file *)f;

	return s->real->pMethods->xShmMap(s->real, pg, sz, ext, pp);
}

static int
s_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
	struct shim_file *s = (struct shim_file *)f;

	return s->real->pMethods->xShmLock(s->real, off, n, flags);
}

static void
s_shm_barrier(sqlite3_file *f)
{
	struct shim_file *s = (struct shim_file *)f;

	s->real->pMethods->xShmBarrier(s->real);
}

static int
s_shm_unmap(sqlite3_file *f, int del)
{
	struct shim_file *s = (struct shim_file *)f;

	return s->real->pMethods->xShmUnmap(s->real, del);
}

static const sqlite3_io_methods shim_methods = {
	2, s_close, s_read, s_write, s_truncate, s_sync, s_size, s_lock,
	s_unlock, s_check_lock, s_fcntl, s_sector, s_devchar, s_shm_map,
	s_shm_lock, s_shm_barrier, s_shm_unmap, NULL, NULL
};

static int
shim_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags,
    int *out)
{
	struct shim_file *s = (struct shim_file *)f;
	int rc;

	(void)vfs;
	s->real = (sqlite3_file *)(s + 1);
	rc = real_vfs->xOpen(real_vfs, name, s->real, flags, out);
	s->base.pMethods = rc == SQLITE_OK ? &shim_methods : NULL;
	return rc;
}

static int
shim_delete(sqlite3_vfs *v, const char *n, int sync)
{
	(void)v;
	return real_vfs->xDelete(real_vfs, n, sync);
}

static int
shim_access(sqlite3_vfs *v, const char *n, int flags, int *out)
{
	(void)v;
	return real_vfs->xAccess(real_vfs, n, flags, out);
}

static int
shim_fullname(sqlite3_vfs *v, const char *n, int cap, char *out)
{
	(void)v;
	return real_vfs->xFullPathname(real_vfs, n, cap, out);
}

static int
shim_random(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return real_vfs->xRandomness(real_vfs, n, out);
}

static int
shim_sleep(sqlite3_vfs *v, int us)
{
	(void)v;
	return real_vfs->xSleep(real_vfs, us);
}

static int
shim_time(sqlite3_vfs *v, double *out)
{
	(void)v;
	return real_vfs->xCurrentTime(real_vfs, out);
}

static int
shim_last_error(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return real_vfs->xGetLastError(real_vfs, n, out);
}

static int
shim_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
	(void)v;
	return real_vfs->xCurrentTimeInt64(real_vfs, out);
}

static sqlite3_vfs shim_vfs;

static sqlite3_mem_methods real_mem;

static void *
m_malloc(int n)
{
	long left = atomic_load(&mem_countdown);

	if (left >= 0 && atomic_fetch_sub(&mem_countdown, 1) <= 0) {
		atomic_fetch_add(&mem_failed, 1);
		return NULL;
	}
	return real_mem.xMalloc(n);
}

static void *
m_realloc(void *p, int n)
{
	long left = atomic_load(&mem_countdown);

	if (left >= 0 && atomic_fetch_sub(&mem_countdown, 1) <= 0) {
		atomic_fetch_add(&mem_failed, 1);
		return NULL;
	}
	return real_mem.xRealloc(p, n);
}

/* Install both shims; before SQLite is first used. */
static void
install_shims(void)
{
	sqlite3_mem_methods m;

	assert_int_equal(sqlite3_config(SQLITE_CONFIG_GETMALLOC, &real_mem),
	    SQLITE_OK);
	m = real_mem;
	m.xMalloc = m_malloc;
	m.xRealloc = m_realloc;
	assert_int_equal(sqlite3_config(SQLITE_CONFIG_MALLOC, &m), SQLITE_OK);
	assert_int_equal(sqlite3_initialize(), SQLITE_OK);
	real_vfs = sqlite3_vfs_find(NULL);
	assert_non_null(real_vfs);
	memset(&shim_vfs, 0, sizeof(shim_vfs));
	shim_vfs.iVersion = 2;
	shim_vfs.szOsFile = (int)sizeof(struct shim_file) +
	    real_vfs->szOsFile;
	shim_vfs.mxPathname = real_vfs->mxPathname;
	shim_vfs.zName = "faulty";
	shim_vfs.xOpen = shim_open;
	shim_vfs.xDelete = shim_delete;
	shim_vfs.xAccess = shim_access;
	shim_vfs.xFullPathname = shim_fullname;
	shim_vfs.xRandomness = shim_random;
	shim_vfs.xSleep = shim_sleep;
	shim_vfs.xCurrentTime = shim_time;
	shim_vfs.xGetLastError = shim_last_error;
	shim_vfs.xCurrentTimeInt64 = shim_time64;
	assert_int_equal(sqlite3_vfs_register(&shim_vfs, 1), SQLITE_OK);
}

static void
faults_off(void)
{
	atomic_store(&io_mode, FAULT_NONE);
	atomic_store(&mem_countdown, -1);
}

/* ---- the API on a store in a file ----------------------------------- */

struct env {
	struct store_sqlite *store;
	struct api_ctx ctx;
	struct fixture_fakes fakes;	/* ctx.env */
	char path[256];
	char acked[512][27];	/* ids that got a 201 */
	size_t nacked;
};

static void
env_open(struct env *env)
{
	struct err e = { 0 };
	int fd;

	memset(env, 0, sizeof(*env));
	snprintf(env->path, sizeof(env->path),
	    "/tmp/preflight-faults-%d-XXXXXX", (int)getpid());
	fd = mkstemp(env->path);
	assert_true(fd >= 0);
	close(fd);
	unlink(env->path);
	assert_int_equal(store_sqlite_open(&env->store, env->path, false, &e),
	    0);
	fixture_api_ctx(&env->ctx, env->store, &env->fakes, 7);
}

static void
env_close(struct env *env)
{
	char p[300];

	store_sqlite_close(env->store);
	api_ctx_fini(&env->ctx);
	unlink(env->path);
	snprintf(p, sizeof(p), "%s-wal", env->path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", env->path);
	unlink(p);
}

/* One request; the status, and the body's "id" into id when given. */
static int
request(struct env *env, const char *method, const char *path,
    const char *query, const char *body, char *id)
{
	struct api_resp resp;
	struct arena a;
	json_t *j;
	int status;

	arena_init(&a, (size_t)64 << 20);
	fixture_api_call(&env->ctx, &a, &resp, method, path, query,
	    body != NULL ? "application/yaml" : NULL, body,
	    body != NULL ? strlen(body) : 0);
	status = resp.status;
	if (status >= 500) {
		/* A 5xx is the store's 503, a problem that leaks nothing. */
		assert_int_equal(status, 503);
		assert_string_equal(resp.content_type,
		    "application/problem+json");
		assert_null(strstr(resp.body, "sqlite"));
		assert_null(strstr(resp.body, "/tmp"));
	}
	if (id != NULL) {
		j = json_loadb(resp.body, resp.body_len, 0, NULL);
		id[0] = '\0';
		if (j != NULL && json_is_string(json_object_get(j, "id")))
			snprintf(id, 27, "%s", json_string_value(
			    json_object_get(j, "id")));
		json_decref(j);
	}
	api_resp_fini(&resp);
	arena_fini(&a);
	return status;
}

static const char cfg[] = "base_model: meta-llama/Llama-3.1-8B\n"
    "datasets:\n  - path: x\n    type: alpaca\nsequence_len: 2048\n"
    "sequence_len: 4096\nmicro_batch_size: 1\n"
    "gradient_accumulation_steps: 1\nadapter: lora\nlora_r: 8\n";

/* POST one check: 201 (remembered), or 503. */
static int
post(struct env *env)
{
	char id[27];
	int st = request(env, "POST", "/v1/checks", "name=f.yaml", cfg, id);

	if (st == 201) {
		assert_true(env->nacked < 512);
		snprintf(env->acked[env->nacked++], 27, "%s", id);
	} else {
		assert_int_equal(st, 503);
	}
	return st;
}

/* Every acknowledged check readable after the store is closed and opened
   again; the file passes integrity_check. */
static void
verify(struct env *env)
{
	char path[64];
	struct err e = { 0 };
	sqlite3 *db;
	sqlite3_stmt *st;
	size_t i;

	store_sqlite_close(env->store);
	assert_int_equal(store_sqlite_open(&env->store, env->path, false, &e),
	    0);
	env->ctx.store = store_sqlite_iface(env->store);
	for (i = 0; i < env->nacked; i++) {
		snprintf(path, sizeof(path), "/v1/checks/%s", env->acked[i]);
		if (request(env, "GET", path, "", NULL, NULL) != 200)
			fail_msg("acknowledged check %s is gone",
			    env->acked[i]);
	}
	assert_int_equal(sqlite3_open_v2(env->path, &db, SQLITE_OPEN_READONLY,
	    "unix"), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1,
	    &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/* Arm a fault at position n (from now) of the kind under test. */
typedef void (*arm_fn)(long n);

static void
arm_io(long n)
{
	atomic_store(&io_failed, 0);
	atomic_store(&io_countdown, n);
	atomic_store(&io_mode, FAULT_IOERR);
}

static void
arm_mem(long n)
{
	atomic_store(&mem_failed, 0);
	atomic_store(&mem_countdown, n);
}

/*
 * For n = 0 .. last: a fault at the n-th operation from now; the faulted
 * request is a 503 or (fault not reached) a 201, and the next request
 * works.  Then every 201 survives a reopen.  How many positions failed
 * the request.
 */
static int
sweep(arm_fn arm, long last, const char *what)
{
	struct env env;
	long n;
	int failed = 0;

	env_open(&env);
	assert_int_equal(post(&env), 201);
	for (n = 0; n <= last; n++) {
		arm(n);
		if (post(&env) == 503)
			failed++;
		faults_off();
		if (post(&env) != 201)
			fail_msg("the request after a fault at %s %ld failed",
			    what, n);
	}
	print_message("%s faults: %d of %ld positions failed the request\n",
	    what, failed, last + 1);
	verify(&env);
	env_close(&env);
	return failed;
}

/* The n-th write or sync from now fails, for n = 0 .. 60. */
static void
test_faults__io_error_on_the_nth_write(void **state)
{
	(void)state;
	/* Position 0 hits the commit itself: the store's VFS writes a
	   commit's WAL frames with one call (server/store_vfs.c), so one
	   request is one write; the later positions fall after it. */
	assert_true(sweep(arm_io, 60, "write") >= 1);
}

/* A full disk: writes answer 503, reads and lists keep working, /readyz
   says so; once space returns everything works and nothing is lost. */
static void
test_faults__disk_full(void **state)
{
	struct env env;
	char path[64];
	int i;

	(void)state;
	env_open(&env);
	for (i = 0; i < 5; i++)
		assert_int_equal(post(&env), 201);
	assert_int_equal(request(&env, "GET", "/readyz", "", NULL, NULL), 200);
	atomic_store(&io_countdown, -1);
	atomic_store(&io_mode, FAULT_FULL);
	for (i = 0; i < 5; i++)
		assert_int_equal(post(&env), 503);
	assert_int_equal(request(&env, "GET", "/readyz", "", NULL, NULL), 503);
	snprintf(path, sizeof(path), "/v1/checks/%s", env.acked[0]);
	assert_int_equal(request(&env, "GET", path, "", NULL, NULL), 200);
	assert_int_equal(request(&env, "GET", "/v1/checks", "limit=3", NULL,
	    NULL), 200);
	assert_int_equal(request(&env, "GET", "/v1/configs/f.yaml/checks", "",
	    NULL, NULL), 200);
	assert_int_equal(request(&env, "POST", "/v1/checks", "dry_run=true",
	    cfg, NULL), 200);
	assert_true(atomic_load(&io_failed) > 0);
	faults_off();
	assert_int_equal(request(&env, "GET", "/readyz", "", NULL, NULL), 200);
	assert_int_equal(post(&env), 201);
	assert_int_equal(env.nacked, 6);
	verify(&env);
	env_close(&env);
}

/* The n-th SQLite allocation from now fails, for n = 0 .. 80. */
static void
test_faults__allocation_failure_in_sqlite(void **state)
{
	(void)state;
	assert_true(sweep(arm_mem, 80, "allocation") >= 1);
}

/* ---- the core under an arena budget --------------------------------- */

static const char *const configs[] = {
	"llama-3/qlora-fsdp-70b.yaml", "llama-3/fft-8b-liger-fsdp.yaml",
	"deepseek-v2/qlora-fsdp-2_5.yaml", "mistral/mistral-qlora-fsdp.yml",
	"gemma3/gemma-3-1b-qlora.yml",
};

static char *
report_text(const char *buf, size_t len, size_t budget, int *rv,
    struct err *e)
{
	struct context ctx;
	struct limits lim;
	struct arena a;
	struct report *r;
	char *out = NULL;

	context_default(&ctx);
	ctx.gpus = 8;
	limits_default(&lim);
	arena_init(&a, budget);
	memset(e, 0, sizeof(*e));
	*rv = check_run(&r, buf, len, &ctx, &lim, &a, e);
	if (*rv == 0)
		out = encode_report_json_text(r, "f.yaml", NULL);
	arena_fini(&a);
	return out;
}

static void
test_faults__core_arena_budget_sweep(void **state)
{
	char path[512];
	struct err e;
	size_t i, len, budget;
	int rv, tried;

	(void)state;
	for (i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		char *text, *full, *got = NULL;

		snprintf(path, sizeof(path), "%s/corpus/axolotl/examples/%s",
		    fixture_shared(), configs[i]);
		text = fixture_read(path, &len);
		if (text == NULL)
			fail_msg("cannot read %s", path);
		full = report_text(text, len, (size_t)64 << 20, &rv, &e);
		assert_int_equal(rv, 0);
		tried = 0;
		/* Budgets from 1 KiB up by an eighth each step. */
		for (budget = 1024; budget < ((size_t)64 << 20);
		    budget += budget / 8 + 1) {
			got = report_text(text, len, budget, &rv, &e);
			tried++;
			if (rv == 0)
				break;
			if (rv != ERR_NOMEM)
				fail_msg("%s at %zu bytes: error %d, not "
				    "ERR_NOMEM", configs[i], budget, rv);
			/* Set where it was found: the code returned, and a
			   message naming the stage. */
			assert_int_equal(e.code, rv);
			assert_true(strncmp(e.msg, "request memory budget "
			    "spent", 26) == 0 || strncmp(e.msg, "no memory",
			    9) == 0);
		}
		assert_non_null(got);
		assert_true(tried > 10);
		assert_string_equal(got, full);
		/* More budget never fails again. */
		free(got);
		got = report_text(text, len, budget * 2, &rv, &e);
		assert_int_equal(rv, 0);
		assert_string_equal(got, full);
		free(got);
		free(full);
		free(text);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_faults__core_arena_budget_sweep),
		cmocka_unit_test(test_faults__io_error_on_the_nth_write),
		cmocka_unit_test(test_faults__disk_full),
		cmocka_unit_test(test_faults__allocation_failure_in_sqlite),
	};

	install_shims();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
