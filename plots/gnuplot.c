/*
 * gnuplot.c: the gnuplot script written next to each image, and running gnuplot on it.
 *
 * The script is self-contained (variables, terminal, then the kind's script text copied in), so
 * `gnuplot FILE.gp` redraws the image later, on another machine or after installing gnuplot.
 * The kind's script comes from the copy embedded at build time, or from $LLMSIM_PLOTS_DIR/KIND.gp
 * when that variable is set. gnuplot itself is $LLMSIM_GNUPLOT when set, else `gnuplot` on PATH;
 * it runs as a child process (posix_spawn) with its stderr passed through.
 */
#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plt_int.h"

extern char **environ;

/* Writes s as a gnuplot single-quoted string. Inside single quotes gnuplot substitutes nothing
 * (no `backquoted` shell command, no @macro, no backslash escape) and '' stands for one quote,
 * so no text from a database or the command line can reach gnuplot as code; a control character
 * (a newline would end the command) is written as a space. */
static void put_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '\'')
            fputs("''", f);
        else
            fputc(*c < 0x20 || *c == 0x7f ? ' ' : *c, f);
    }
    fputc('\'', f);
}

void plt_gp_str(FILE *f, const char *name, const char *value)
{
    fprintf(f, "%s = ", name);
    put_quoted(f, value);
    fputc('\n', f);
}

void plt_gp_array(FILE *f, const char *name, const char *const *v, int n)
{
    fprintf(f, "array %s[%d] = [", name, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) {
        fputs(i ? ", " : "", f);
        put_quoted(f, v[i]);
    }
    fputs(n > 0 ? "]\n" : "'']\n", f);
}

void plt_put_clean(FILE *f, const char *text)
{
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        fputc(*c < 0x20 || *c == 0x7f ? ' ' : *c, f);
}

int plt_check_path(const char *path, const char *what, sim_err *err)
{
    for (const unsigned char *c = (const unsigned char *)path; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            return sim_errf(err,
                            "%s path holds a control character (byte 0x%02x at %d); refused: it "
                            "would be written into the gnuplot script",
                            what, *c, (int)((const char *)c - path));
    return 0;
}

/* The text of script `kind`: from $LLMSIM_PLOTS_DIR when set (malloc'd into *owned), else the
 * embedded copy. NULL with err when not found. */
static const char *script_text(const char *kind, char **owned, sim_err *err)
{
    *owned = NULL;
    const char *dir = getenv("LLMSIM_PLOTS_DIR");
    if (dir && *dir) {
        char path[PLT_PATH_MAX];
        snprintf(path, sizeof path, "%s/%s.gp", dir, kind);
        FILE *f = fopen(path, "rb");
        if (!f) {
            sim_errf(err, "%s: cannot read the plot script (LLMSIM_PLOTS_DIR): %s", path,
                     strerror(errno));
            return NULL;
        }
        *owned = plt_read_all(f);
        fclose(f);
        return *owned;
    }
    for (const plt_script *s = plt_scripts; s->name; s++)
        if (strcmp(s->name, kind) == 0)
            return (const char *)s->text;
    sim_errf(err, "no embedded plot script '%s'", kind);
    return NULL;
}

char *plt_read_all(FILE *f)
{
    size_t cap = 4096, n = 0, got;
    char *buf = sim_xmalloc(cap);
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0)
        if ((n += got) + 1 == cap)
            buf = sim_xrealloc(buf, cap *= 2);
    buf[n] = '\0';
    return buf;
}

static const char *extension(const char *path)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    return dot && (!slash || dot > slash) ? dot + 1 : "";
}

void plt_default_size(plt_result *res, int width, int height)
{
    if (!res->width)
        res->width = width;
    if (!res->height)
        res->height = height;
}

/* The terminal line for res->image's extension at its size. 0, or -1 with err (unknown type). */
static int put_terminal(FILE *f, const plt_result *res, sim_err *err)
{
    const char *ext = extension(res->image);
    int w = res->width, h = res->height;
    fputs("\n# terminal: follows the image's extension\n", f);
    if (strcmp(ext, "png") == 0)
        fprintf(f,
                "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
                "    set terminal pngcairo size %d,%d noenhanced font 'Sans,10'\n"
                "} else {\n"
                "    set terminal png size %d,%d noenhanced\n"
                "}\n",
                w, h, w, h);
    else if (strcmp(ext, "svg") == 0)
        fprintf(f, "set terminal svg size %d,%d noenhanced font 'Sans,10' background 'white'\n", w,
                h);
    else if (strcmp(ext, "pdf") == 0)
        fprintf(f, "set terminal pdfcairo size %.2fin,%.2fin noenhanced font 'Sans,8'\n", w / 100.0,
                h / 100.0);
    else
        return sim_errf(err, "%s: unknown image type '.%s'; use .png, .svg or .pdf", res->image,
                        ext);
    return 0;
}

int plt_gp_finish(FILE *f, const char *kind, const plt_result *res, sim_err *err)
{
    if (put_terminal(f, res, err) != 0)
        return -1;
    plt_gp_str(f, "outfile", res->image);
    fputs("set output outfile\n\n", f);
    char *owned;
    const char *text = script_text(kind, &owned, err);
    if (!text)
        return -1;
    fputs(text, f);
    free(owned);
    fputs("\nset output\n", f);
    return 0;
}

/* The gnuplot program to run into buf, or -1 when none is installed. */
static int find_gnuplot(char *buf, size_t len)
{
    const char *env = getenv("LLMSIM_GNUPLOT");
    if (env && *env) {
        snprintf(buf, len, "%s", env);
        if (strchr(env, '/'))
            return access(env, X_OK) == 0 ? 0 : -1;
    } else
        snprintf(buf, len, "gnuplot");
    const char *path = getenv("PATH");
    if (!path)
        return -1;
    char prog[PLT_PATH_MAX];
    snprintf(prog, sizeof prog, "%s", buf);
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        struct stat sb;
        int w = snprintf(buf, len, "%.*s/%s", (int)n, n ? p : ".", prog);
        if (w > 0 && (size_t)w < len && stat(buf, &sb) == 0 && S_ISREG(sb.st_mode) &&
            access(buf, X_OK) == 0)
            return 0;
        p += n + (p[n] == ':');
    }
    return -1;
}

int plt_gp_run(plt_result *res, sim_err *err)
{
    char prog[PLT_PATH_MAX];
    res->rendered = 0;
    if (find_gnuplot(prog, sizeof prog) != 0)
        return 0;
    char *argv[] = {prog, res->script, NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, prog, NULL, NULL, argv, environ);
    if (rc != 0)
        return sim_errf(err, "%s: cannot run gnuplot: %s", prog, strerror(rc));
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return sim_errf(err, "%s: waiting for gnuplot: %s", prog, strerror(errno));
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return sim_errf(err, "%s: gnuplot failed (%s %d) on %s", prog,
                        WIFEXITED(st) ? "exit status" : "signal",
                        WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), res->script);
    struct stat sb;
    if (stat(res->image, &sb) != 0 || sb.st_size == 0)
        return sim_errf(err, "%s: gnuplot wrote no image (script %s)", res->image, res->script);
    res->rendered = 1;
    return 0;
}
