/*
 * server/store_diagnose: diagnoses and measurements in the SQLite store
 * (issue #19; migrations/0005_add_diagnoses.sql).  The ops of api/store.h
 * that server/store_sqlite.c's table points at.
 */
#ifndef SERVER_STORE_DIAGNOSE_H
#define SERVER_STORE_DIAGNOSE_H

#include <stddef.h>

#include "api/store.h"

/* store_ops.put_diagnosis: self is a struct store_sqlite. */
int store_diagnose_put(void *self, const struct store_diagnosis *d,
    struct err *e);

/* The query of list_measurements (its plan is tested). */
extern const char store_diagnose_list_sql[];

/* store_ops.list_measurements: self is a struct store_sqlite. */
int store_diagnose_measurements(void *self, struct store_diagnosis **out,
    size_t *n, const struct store_mquery *q, struct arena *a,
    struct err *e);

#endif /* SERVER_STORE_DIAGNOSE_H */
