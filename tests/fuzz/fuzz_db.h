/*
 * fuzz_db.h: what the store and plot harnesses share: a folder in memory, files rewritten in
 * it, and a small llmsim database holding one of everything the plots and reports read.
 */
#ifndef LLMSIM_FUZZ_DB_H
#define LLMSIM_FUZZ_DB_H

#include <stddef.h>
#include <stdint.h>

/* A new folder for the harness `name`, in memory when /dev/shm is a tmpfs (a file rewritten on
 * ext4 is flushed to the disk when closed), else in $TMPDIR or /tmp; removed with the files
 * fuzz_file named at exit. Returns it (static). Aborts when it cannot be made. */
const char *fuzz_dir(const char *name);
/* The path of file `name` in the folder, into buf; the file goes at exit with its side files. */
const char *fuzz_file(char *buf, size_t len, const char *name);
/* path (its -wal, -shm and -journal removed) holds exactly b[0..n). Aborts on a failure. */
void fuzz_put(const char *path, const void *b, size_t n);
/* The whole file at path (malloc'd, *n its size). Aborts on a failure. */
uint8_t *fuzz_slurp(const char *path, size_t *n);
void fuzz_must(int ok);
/* Creates at path an llmsim database (one file, rollback journal) with two runs (requests,
 * iterations, a span, metrics; schedulers orca and vllm), a sweep of them over scheduler.name,
 * a capacity search with a probe and a result, and a validation with a row, a value and a
 * statistic. */
void fuzz_db_template(const char *path);

#endif
