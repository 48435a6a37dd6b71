/*
 * fuzz_mem.c: see fuzz_mem.h.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "fuzz_mem.h"
#include "store.h"

static char dir[128];
static char *files[16];
static int nfiles;

static void remove_all(void)
{
    for (int i = 0; i < nfiles; i++) {
        store_remove_files(files[i]); /* and what SQLite left beside it */
        free(files[i]);
    }
    rmdir(dir);
}

const char *fuzz_dir(const char *name)
{
    if (dir[0])
        return dir;
    struct statfs fs;
    const char *tmp = getenv("TMPDIR");
    const char *base = statfs("/dev/shm", &fs) == 0 && fs.f_type == 0x01021994 /* TMPFS_MAGIC */
                           ? "/dev/shm"
                           : tmp && *tmp ? tmp : "/tmp";
    snprintf(dir, sizeof dir, "%s/llmsim-fuzz-%s-XXXXXX", base, name);
    fuzz_must(mkdtemp(dir) != NULL);
    atexit(remove_all);
    return dir;
}

const char *fuzz_file(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
    for (int i = 0; i < nfiles; i++)
        if (strcmp(files[i], buf) == 0)
            return buf;
    fuzz_must(nfiles < 16);
    files[nfiles++] = strdup(buf);
    return buf;
}

void fuzz_put(const char *path, const void *b, size_t n)
{
    store_remove_files(path);
    int fd = open(path, O_WRONLY | O_CREAT, 0600);
    fuzz_must(fd >= 0 && (!n || pwrite(fd, b, n, 0) == (ssize_t)n) && ftruncate(fd, (off_t)n) == 0);
    close(fd);
}

void fuzz_rewrite(const char *path, const void *b, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT, 0600);
    fuzz_must(fd >= 0 && (!n || pwrite(fd, b, n, 0) == (ssize_t)n) && ftruncate(fd, (off_t)n) == 0);
    close(fd);
}

uint8_t *fuzz_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    fuzz_must(f != NULL);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(*n + 1);
    fuzz_must(b && fread(b, 1, *n, f) == *n);
    b[*n] = 0;
    fclose(f);
    return b;
}

void fuzz_must(int ok)
{
    if (!ok)
        abort();
}
