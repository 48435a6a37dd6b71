/*
 * fuzz_mem.h: files for the harnesses, in a folder in memory: /dev/shm where it is a tmpfs (a
 * file truncated and rewritten on ext4 is flushed to the disk when it is closed, a wait that
 * made fuzzing slow), else $TMPDIR or /tmp.
 */
#ifndef LLMSIM_FUZZ_MEM_H
#define LLMSIM_FUZZ_MEM_H

#include <stddef.h>
#include <stdint.h>

/* A new folder for the harness `name` (made once; later calls return it), removed with the
 * files fuzz_file named at exit. Aborts when it cannot be made. */
const char *fuzz_dir(const char *name);
/* The path of file `name` in the folder, into buf; the file (and any -wal, -shm and -journal
 * beside it) goes at exit. */
const char *fuzz_file(char *buf, size_t len, const char *name);
/* path holds exactly b[0..n), its -wal, -shm and -journal removed (a database file as given).
 * Aborts on a failure. */
void fuzz_put(const char *path, const void *b, size_t n);
/* path holds exactly b[0..n): written over and cut to n bytes, never truncated first. */
void fuzz_rewrite(const char *path, const void *b, size_t n);
/* The whole file at path (malloc'd and NUL-terminated, *n its size). Aborts on a failure. */
uint8_t *fuzz_slurp(const char *path, size_t *n);
void fuzz_must(int ok);

#endif
