/*
 * fuzz_db.h: the small llmsim database the store, plot and argv harnesses start from.
 */
#ifndef LLMSIM_FUZZ_DB_H
#define LLMSIM_FUZZ_DB_H

#include "fuzz_mem.h"

/* Creates at path an llmsim database (one file, rollback journal) with two runs (requests,
 * iterations, a span, metrics; schedulers orca and vllm), a sweep of them over scheduler.name,
 * a capacity search with a probe and a result, and a validation with a row, a value and a
 * statistic. Aborts on a failure. */
void fuzz_db_template(const char *path);

#endif
