/*
 * trace.c: streaming readers for request traces: azure, mooncake, vidur and mapped csv.
 *
 * A reader holds the open file and the one line being parsed (getline's buffer), never the
 * whole trace, so a multi-million-row trace replays in constant memory. Formats:
 *   azure    CSV: TIMESTAMP (YYYY-MM-DD HH:MM:SS.fffffff), ContextTokens, GeneratedTokens
 *   mooncake JSON Lines: timestamp (ms), input_length, output_length, and hash_ids (one id per
 *            block of the prompt, read when asked for)
 *   vidur    CSV: arrived_at (s, optional: without it the file gives lengths only),
 *            num_prefill_tokens, num_decode_tokens
 *   csv      CSV with the columns the scenario names; time in units of time_unit_s seconds
 * Column names given in the scenario replace a format's defaults. CSV fields are split on
 * commas; surrounding spaces and double quotes are stripped, CRLF line ends and a UTF-8
 * byte-order mark (as spreadsheets write one) accepted. A trace is a regular file (not a device
 * or a pipe) with at least one row, whose lines are at most SCN_TRACE_MAX_LINE bytes: a longer
 * line is refused as soon as the limit is passed, never read whole. Azure times are calendar
 * dates (2023-02-30 is refused). The reader owns its path copy, line buffer and header names.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csv.h"
#include "json.h"
#include "scn_data.h"
#include "scn_int.h"

enum { F_AZURE = 0, F_MOONCAKE, F_VIDUR, F_CSV, F_COUNT };
enum { C_TIME = 0, C_PROMPT, C_OUTPUT, C_COUNT };

static const char *const format_names[F_COUNT] = {"azure", "mooncake", "vidur", "csv"};
static const char *const default_cols[F_COUNT][C_COUNT] = {
    {"TIMESTAMP", "ContextTokens", "GeneratedTokens"},
    {"timestamp", "input_length", "output_length"},
    {"arrived_at", "num_prefill_tokens", "num_decode_tokens"},
    {NULL, NULL, NULL}};

struct scn_trace_reader {
    FILE *f;
    char *path;
    char *line; /* the line being parsed (getline's buffer) */
    size_t cap;
    int64_t lineno; /* 1-based line of the row last read */
    int peeked;     /* 1: line holds the first row, read by scn_trace_open, not returned yet */
    int fmt;
    scn_time_kind tkind;
    double unit_s;       /* seconds per unit of a numeric time */
    char *name[C_COUNT]; /* column or key names; NULL = not read */
    int col[C_COUNT];    /* CSV field index of each; -1 = not read */
    int ncols;           /* CSV header width */
    char **fields;       /* ncols field pointers into line, reused for every row */
    int have_prev;
    int64_t prev_t;
    int want_hash;  /* mooncake: read hash_ids */
    char *hash_val; /* the row's hash_ids array text (in line), or NULL */
    int64_t *hash;  /* its ids */
    int32_t caphash;
};

const char *scn_trace_formats(void)
{
    return "azure, mooncake, vidur, csv";
}

int scn_trace_format_known(const char *f)
{
    for (int i = 0; i < F_COUNT; i++)
        if (strcmp(f, format_names[i]) == 0)
            return 1;
    return 0;
}

int scn_trace_has_time(const scn_trace_reader *r)
{
    return r->tkind != SCN_TIME_NONE;
}

int scn_trace_has_hashes(const scn_trace_reader *r)
{
    return r->want_hash;
}

int64_t scn_trace_line(const scn_trace_reader *r)
{
    return r->lineno;
}

void scn_trace_close(scn_trace_reader *r)
{
    if (!r)
        return;
    if (r->f)
        fclose(r->f);
    for (int i = 0; i < C_COUNT; i++)
        free(r->name[i]);
    SIM_FREE_ALL(r->fields, r->hash, r->line, r->path, r);
}

/* Room in r->line past its n bytes (doubling, at most the limit and its line end); -1 when n
 * already passes SCN_TRACE_MAX_LINE. */
static int grow_line(scn_trace_reader *r, size_t n)
{
    if (n > SCN_TRACE_MAX_LINE)
        return -1;
    r->cap = r->cap ? 2 * r->cap : 4096;
    if (r->cap > SCN_TRACE_MAX_LINE + 2)
        r->cap = SCN_TRACE_MAX_LINE + 2;
    r->line = sim_xrealloc(r->line, r->cap);
    return 0;
}

/* One line with its '\n' into r->line (NUL-terminated): its length, 0 at the end of the file,
 * -1 on a read error, -2 when it passes SCN_TRACE_MAX_LINE bytes (the rest is not read, so a
 * 1 GB line costs no more memory than the limit). */
static int64_t get_line(scn_trace_reader *r)
{
    size_t n = 0;
    int ch = 0;
    while (ch != '\n' && (ch = getc_unlocked(r->f)) != EOF) {
        if (n + 2 > r->cap && grow_line(r, n) != 0)
            return -2;
        r->line[n++] = (char)ch;
    }
    if (n && n + 1 <= r->cap)
        r->line[n] = '\0';
    return ferror(r->f) ? -1 : (int64_t)n;
}

/* r->line (n bytes) without its line end, and the first line without a UTF-8 byte-order mark
 * (as spreadsheets save CSV): its new length. */
static int64_t trim_line(scn_trace_reader *r, int64_t n)
{
    while (n > 0 && (r->line[n - 1] == '\n' || r->line[n - 1] == '\r'))
        r->line[--n] = '\0';
    if (r->lineno == 1 && n >= 3 && memcmp(r->line, "\xEF\xBB\xBF", 3) == 0) {
        memmove(r->line, r->line + 3, (size_t)n - 2);
        n -= 3;
    }
    return n;
}

/* Whether a line holds only spaces and tabs. */
static int blank(const char *line)
{
    return line[strspn(line, " \t")] == '\0';
}

/* Reads the next non-blank line into r->line without its line end. 1, 0 at EOF, -2 on error. */
static int read_line(scn_trace_reader *r, sim_err *err)
{
    if (r->peeked) {
        r->peeked = 0;
        return 1;
    }
    for (;;) {
        errno = 0;
        int64_t n = get_line(r);
        if (n == -1)
            return sim_errf(err, "%s: read error: %s", r->path, strerror(errno)), -2;
        if (n == 0)
            return 0;
        r->lineno++;
        if (n == -2 || n - (r->line[n - 1] == '\n') > SCN_TRACE_MAX_LINE)
            return sim_errf(err, "%s:%lld: a line longer than %d bytes (the limit)", r->path,
                            (long long)r->lineno, SCN_TRACE_MAX_LINE),
                   -2;
        n = trim_line(r, n);
        if ((size_t)n != strlen(r->line))
            return sim_errf(err, "%s:%lld: NUL byte in a text trace", r->path,
                            (long long)r->lineno),
                   -2;
        if (!blank(r->line))
            return 1;
    }
}

/* The header's n names f as "a, b, c" in list (len bytes). */
static const char *column_list(char **f, int n, char *list, size_t len)
{
    size_t off = 0;
    list[0] = '\0';
    for (int i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(list + off, len - off, "%s%s", i ? ", " : "", f[i]);
    return list;
}

/* Finds column c (by its name) among the header's n names f into r->col[c]; a vidur trace whose
 * time column is not named and absent is the length-only variant; -1 with err listing the
 * header's columns when a named one is missing. */
static int find_column(scn_trace_reader *r, const scn_trace_spec *sp, int c, char **f, int n,
                       sim_err *err)
{
    r->col[c] = -1;
    if (!r->name[c])
        return 0;
    for (int i = 0; i < n; i++)
        if (strcmp(f[i], r->name[c]) == 0)
            r->col[c] = i;
    if (r->col[c] >= 0)
        return 0;
    if (c == C_TIME && r->fmt == F_VIDUR && !sp->col_time) {
        r->tkind = SCN_TIME_NONE; /* the length-only vidur variant */
        return 0;
    }
    char list[512];
    return sim_errf(err, "%s:%lld: no column '%s' in the header (columns: %s)", r->path,
                    (long long)r->lineno, r->name[c], column_list(f, n, list, sizeof list));
}

static int read_header(scn_trace_reader *r, const scn_trace_spec *sp, sim_err *err)
{
    int rc = read_line(r, err);
    if (rc == 0)
        return sim_errf(err, "%s: empty file (expected a header line)", r->path);
    if (rc < 0)
        return -1;
    char *copy = sim_xstrdup(r->line);
    const char *why;
    int n = sim_csv_width(copy);
    char **f = sim_xmalloc(sizeof *f * (size_t)n);
    n = sim_csv_split(copy, SIM_CSV_TRIM, f, n, &why);
    rc = n < 0 ? sim_errf(err, "%s:%lld: the header: %s", r->path, (long long)r->lineno, why) : 0;
    r->ncols = n < 0 ? 0 : n;
    r->fields = sim_xmalloc(sizeof *r->fields * (size_t)(r->ncols + 1));
    for (int c = 0; c < C_COUNT && !rc; c++)
        rc = find_column(r, sp, c, f, n, err);
    free(f);
    free(copy);
    return rc;
}

scn_trace_spec scn_trace_spec_of(const scn_trace *t)
{
    return (scn_trace_spec){.path = t->path,
                            .format = t->format,
                            .col_time = *t->col_time ? t->col_time : NULL,
                            .col_prompt = *t->col_prompt ? t->col_prompt : NULL,
                            .col_output = *t->col_output ? t->col_output : NULL,
                            .time_unit_s = t->time_unit_s,
                            .lengths_only = t->lengths_only,
                            .want_prompt = 1,
                            .want_output = 1,
                            .want_hash = t->hash_block > 0};
}

/* The index of sp's format in format_names, or -1 with err naming the valid ones. */
static int format_of(const scn_trace_spec *sp, sim_err *err)
{
    int fmt = 0;
    while (fmt < F_COUNT && strcmp(sp->format, format_names[fmt]) != 0)
        fmt++;
    if (fmt < F_COUNT)
        return fmt;
    return sim_errf(err, "%s: unknown trace format '%s' (valid: %s)", sp->path, sp->format,
                    scn_trace_formats());
}

/* The columns r reads (the spec's names, else the format's), its time kind and unit; -1 with
 * err when a length the spec wants has no column name. */
static int name_columns(scn_trace_reader *r, const scn_trace_spec *sp, sim_err *err)
{
    const char *given[C_COUNT] = {sp->col_time, sp->col_prompt, sp->col_output};
    int want[C_COUNT] = {!sp->lengths_only, sp->want_prompt, sp->want_output}, fmt = r->fmt;
    for (int c = 0; c < C_COUNT; c++) {
        const char *nm = given[c] ? given[c] : default_cols[fmt][c];
        if (want[c] && nm)
            r->name[c] = sim_xstrdup(nm);
        r->col[c] = -1;
    }
    if (r->name[C_TIME]) {
        r->tkind = fmt == F_AZURE ? SCN_TIME_DATETIME : SCN_TIME_NUMBER;
        r->unit_s = sp->time_unit_s > 0 ? sp->time_unit_s : fmt == F_MOONCAKE ? 1e-3 : 1.0;
    }
    for (int c = C_PROMPT; c < C_COUNT; c++)
        if (want[c] && !r->name[c])
            return sim_errf(err, "%s: format %s needs the %s column named", sp->path, sp->format,
                            c == C_PROMPT ? "prompt" : "output");
    return 0;
}

/* Opens the trace file into r->f; -1 with err (naming the public data set a shared path is part
 * of) when it cannot be opened or is not a regular file. */
static int open_file(scn_trace_reader *r, const char *path, sim_err *err)
{
    r->f = fopen(path, "rb");
    if (!r->f) {
        const char *why = strerror(errno), *data = scn_data_source(path);
        return sim_errf(err, "%s: cannot open: %s%s%s%s", path, why, data ? "; it is part of " : "",
                        data ? data : "",
                        data ? ", read in place from ../shared/data (docs/scenarios.md)" : "");
    }
    /* a device (/dev/zero: one endless line), a directory or a pipe is no trace file */
    struct stat st;
    if (fstat(fileno(r->f), &st) != 0 || !S_ISREG(st.st_mode))
        return sim_errf(err, "%s: not a regular file", path);
    return 0;
}

/* Reads the first row now (kept for the first scn_trace_next), so that a trace without one is
 * refused when it is opened (at load time), not replayed as no requests. */
static int peek_first_row(scn_trace_reader *r, const scn_trace_spec *sp, sim_err *err)
{
    int rc = read_line(r, err);
    if (rc < 0)
        return -1;
    if (rc == 0)
        return sim_errf(err, "%s: %s: the trace is empty", sp->path,
                        r->fmt == F_MOONCAKE ? "no rows" : "no rows after the header line");
    r->peeked = 1;
    return 0;
}

scn_trace_reader *scn_trace_open(const scn_trace_spec *sp, sim_err *err)
{
    int fmt = format_of(sp, err);
    if (fmt < 0)
        return NULL;
    scn_trace_reader *r = sim_xcalloc(1, sizeof *r);
    r->path = sim_xstrdup(sp->path);
    r->fmt = fmt;
    r->want_hash = sp->want_hash && fmt == F_MOONCAKE;
    if (name_columns(r, sp, err) || open_file(r, sp->path, err) ||
        (fmt != F_MOONCAKE && read_header(r, sp, err)) || peek_first_row(r, sp, err)) {
        scn_trace_close(r);
        return NULL;
    }
    return r;
}

/* ---- field parsing ---- */

static int bad(scn_trace_reader *r, sim_err *err, const char *fmt, const char *field,
               const char *val)
{
    char what[256];
    snprintf(what, sizeof what, fmt, field, val);
    return sim_errf(err, "%s:%lld: bad row: %s", r->path, (long long)r->lineno, what);
}

static int parse_count(scn_trace_reader *r, const char *field, const char *s, int64_t *out,
                       sim_err *err)
{
    char *end;
    if (!*s)
        return bad(r, err, "field '%s' is empty%s", field, "");
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end) { /* accept integral values written as floats ("12.0") */
        double d = strtod(s, &end);
        if (*end || !isfinite(d) || d != floor(d) || fabs(d) > 9e15)
            return bad(r, err, "field '%s' is not a whole number: '%s'", field, s);
        v = (long long)d;
    } else if (errno) {
        return bad(r, err, "field '%s' is out of range: '%s'", field, s);
    }
    if (v < 0)
        return bad(r, err, "field '%s' is negative: '%s'", field, s);
    *out = v;
    return 0;
}

static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (**p < '0' || **p > '9')
            return -1;
        v = v * 10 + (**p - '0');
    }
    *out = v;
    return 0;
}

/* Whether the fields name a time the calendar has: 0, -1 when a field is out of its range, -3
 * for a day the month does not have (2023-02-30). */
static int check_date(int y, int mo, int d, int h, int mi, int se)
{
    static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || se > 60)
        return -1;
    if (d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap))
        return -3;
    return 0;
}

/* The fraction of a second at *p (".fff", digits past nanoseconds ignored) into *frac, ns;
 * *p moves past it. -1 when no digit follows the point. */
static int parse_fraction(const char **p, int64_t *frac)
{
    int64_t scale = SIM_NS_PER_S;
    (*p)++;
    if (**p < '0' || **p > '9')
        return -1;
    for (; **p >= '0' && **p <= '9'; (*p)++)
        if (scale > 1) {
            scale /= 10;
            *frac += (**p - '0') * scale;
        }
    return 0;
}

/* "YYYY-MM-DD HH:MM:SS[.fffffffff]" (or with a T) -> ns since 1970-01-01 (no time zone).
 * -1 when malformed, -3 when no such day (2023-02-30), -2 when outside what int64 ns since 1970
 * hold (1970-01-01 00:00:00 to 2262-04-11 23:47:16.854775807), like the non-negative numeric times.
 */
static int parse_datetime(const char *s, int64_t *out)
{
    int y, mo, d, h, mi, se;
    const char *p = s;
    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
        digits(&p, 2, &d) || (*p != ' ' && *p != 'T') || !*p++ || digits(&p, 2, &h) ||
        *p++ != ':' || digits(&p, 2, &mi) || *p++ != ':' || digits(&p, 2, &se))
        return -1;
    int64_t frac = 0;
    int rc = check_date(y, mo, d, h, mi, se);
    if (rc)
        return rc;
    if (*p == '.' && parse_fraction(&p, &frac))
        return -1;
    if (*p)
        return -1;
    int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
    if (secs < 0 || secs > (INT64_MAX - frac) / SIM_NS_PER_S)
        return -2;
    *out = secs * SIM_NS_PER_S + frac;
    return 0;
}

static int parse_time(scn_trace_reader *r, const char *s, int64_t *out, sim_err *err)
{
    const char *field = r->name[C_TIME];
    if (!*s)
        return bad(r, err, "field '%s' is empty%s", field, "");
    if (r->tkind == SCN_TIME_DATETIME) {
        int rc = parse_datetime(s, out);
        if (rc == -2)
            return bad(r, err,
                       "field '%s' is outside 1970-01-01 .. 2262-04-11 (int64 nanoseconds): '%s'",
                       field, s);
        if (rc == -3)
            return bad(r, err, "field '%s' names a day the calendar does not have: '%s'", field, s);
        if (rc)
            return bad(r, err, "field '%s' is not a YYYY-MM-DD HH:MM:SS.fff time: '%s'", field, s);
        return 0;
    }
    char *end;
    double v = strtod(s, &end);
    if (*end || !isfinite(v))
        return bad(r, err, "field '%s' is not a number: '%s'", field, s);
    if (v < 0)
        return bad(r, err, "field '%s' is negative: '%s'", field, s);
    double ns = v * r->unit_s * 1e9;
    if (ns > 9.2e18)
        return bad(r, err, "field '%s' is out of range: '%s'", field, s);
    *out = (int64_t)llround(ns);
    return 0;
}

/* ---- JSON Lines (mooncake) ---- */

/* The top-level keys of r->name (and hash_ids, when wanted) in the object on r->line, through
 * the shared scan (sim/json.h); vals[c] points at each value or stays NULL. Returns -1 when the
 * line is not a JSON object. */
static int scan_object(scn_trace_reader *r, char *vals[C_COUNT])
{
    const char *keys[C_COUNT + 1];
    char *v[C_COUNT + 1] = {NULL};
    for (int c = 0; c < C_COUNT; c++)
        keys[c] = r->name[c];
    keys[C_COUNT] = r->want_hash ? "hash_ids" : NULL;
    if (sim_json_scan(r->line, keys, C_COUNT + 1, v))
        return -1;
    for (int c = 0; c < C_COUNT; c++)
        vals[c] = v[c];
    if (v[C_COUNT] && *v[C_COUNT] == '[')
        r->hash_val = v[C_COUNT];
    return 0;
}

/* ---- rows ---- */

/* A CSV row's fields split in place; vals[c] points at column c's, NULL past the row's end.
 * 0, or -1 with err when the row does not split. */
static int csv_fields(scn_trace_reader *r, char *vals[C_COUNT], sim_err *err)
{
    const char *why;
    int n = sim_csv_split(r->line, SIM_CSV_TRIM, r->fields, r->ncols, &why);
    if (n < 0)
        return bad(r, err, "%s%s", why, "");
    for (int c = 0; c < C_COUNT; c++)
        if (r->col[c] >= 0 && r->col[c] < n)
            vals[c] = r->fields[r->col[c]];
    return 0;
}

static int fields_of(scn_trace_reader *r, char *vals[C_COUNT], sim_err *err)
{
    for (int c = 0; c < C_COUNT; c++)
        vals[c] = NULL;
    if (r->fmt == F_MOONCAKE) {
        if (scan_object(r, vals))
            return bad(r, err, "not a JSON object%s%s", "", "");
    } else if (csv_fields(r, vals, err)) {
        return -1;
    }
    for (int c = 0; c < C_COUNT; c++) {
        int read = c == C_TIME ? r->tkind != SCN_TIME_NONE : r->name[c] != NULL;
        if (read && !vals[c])
            return bad(r, err, "missing field '%s'%s", r->name[c], "");
    }
    return 0;
}

/* The row's hash_ids array ("[1, 2, 3]") into r->hash; the count, or -1 when malformed. */
static int32_t parse_hashes(scn_trace_reader *r)
{
    int32_t n = 0;
    const char *p = r->hash_val + 1;
    for (;;) {
        p = sim_json_skip_blanks(p);
        if (*p == ']' && n == 0)
            return 0;
        const char *end = p;
        long long v = 0;
        while (*end >= '0' && *end <= '9' && end - p < 18) /* no overflow in 18 digits */
            v = 10 * v + (*end++ - '0');
        if (end == p || (*end >= '0' && *end <= '9')) { /* not a plain id of at most 18 digits */
            char *e;
            errno = 0;
            v = strtoll(p, &e, 10);
            if (e == p || errno || v < 0)
                return -1;
            end = e;
        }
        if (n == r->caphash) {
            r->caphash = r->caphash ? 2 * r->caphash : 64;
            r->hash = sim_xrealloc(r->hash, (size_t)r->caphash * sizeof *r->hash);
        }
        r->hash[n++] = v;
        p = sim_json_skip_blanks(end);
        if (*p == ']')
            return n;
        if (*p++ != ',')
            return -1;
    }
}

/* The row's hash_ids into row (borrowing r's array). 0, or -1 with err when malformed. */
static int row_hashes(scn_trace_reader *r, scn_trace_row *row, sim_err *err)
{
    row->nhash = parse_hashes(r);
    if (row->nhash < 0)
        return bad(r, err, "field '%s' is not a list of non-negative integers%s", "hash_ids", "");
    row->hash = r->hash;
    return 0;
}

/* The row's arrival time (field s) into row, never before the previous row's. 0, or -1 with
 * err. */
static int row_time(scn_trace_reader *r, const char *s, scn_trace_row *row, sim_err *err)
{
    if (parse_time(r, s, &row->t_ns, err))
        return -1;
    if (r->have_prev && row->t_ns < r->prev_t)
        return sim_errf(err,
                        "%s:%lld: bad row: time goes backwards (%.6f s before the "
                        "previous row)",
                        r->path, (long long)r->lineno, (double)(r->prev_t - row->t_ns) / 1e9);
    r->have_prev = 1;
    r->prev_t = row->t_ns;
    return 0;
}

int scn_trace_next(scn_trace_reader *r, scn_trace_row *row, sim_err *err)
{
    char *vals[C_COUNT];
    int rc = read_line(r, err);
    if (rc <= 0)
        return rc;
    memset(row, 0, sizeof *row);
    row->nhash = -1;
    r->hash_val = NULL;
    if (fields_of(r, vals, err))
        return -1;
    if (r->hash_val && row_hashes(r, row, err))
        return -1;
    if (vals[C_PROMPT] && parse_count(r, r->name[C_PROMPT], vals[C_PROMPT], &row->prompt, err))
        return -1;
    if (vals[C_OUTPUT] && parse_count(r, r->name[C_OUTPUT], vals[C_OUTPUT], &row->output, err))
        return -1;
    if (r->tkind != SCN_TIME_NONE && row_time(r, vals[C_TIME], row, err))
        return -1;
    return 1;
}
