/*
 * json.c: the JSON reader and writer of json.h.
 *
 * One recursive-descent pass over the text; the current line and the start of that line are
 * carried along, so positions in messages cost nothing extra. Nodes and strings are carved from
 * arena chunks owned by the document.
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "sim.h"

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    char mem[]; /* aligned for sim_json by the allocation rounding below */
} chunk;

struct sim_json_doc {
    chunk *chunks;
    sim_json *root;
};

typedef struct parser {
    const char *p;
    const char *line_start;
    int line;
    int depth;
    const char *name;
    char *why;
    size_t len;
    sim_json_doc *doc;
} parser;

#define CHUNK_BYTES 16384

static void *arena(sim_json_doc *d, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    chunk *c = d->chunks;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > CHUNK_BYTES ? n : CHUNK_BYTES;
        c = sim_xmalloc(sizeof *c + cap);
        c->next = d->chunks;
        c->used = 0;
        c->cap = cap;
        d->chunks = c;
    }
    void *m = c->mem + c->used;
    c->used += n;
    return m;
}

static int syntax(parser *ps, const char *what)
{
    if (ps->len)
        snprintf(ps->why, ps->len, "%s:%d:%d: %s", ps->name, ps->line,
                 (int)(ps->p - ps->line_start) + 1, what);
    return -1;
}

static void skip_ws(parser *ps)
{
    for (;;) {
        char c = *ps->p;
        if (c == '\n') {
            ps->line++;
            ps->line_start = ps->p + 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            return;
        }
        ps->p++;
    }
}

static int hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int c = (unsigned char)s[i];
        if (!isxdigit(c))
            return -1;
        v = v * 16 + (unsigned)(isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Reads the \u escape at ps->p (pointing at 'u'), a surrogate pair included; *cp gets the code
 * point (U+FFFD for a lone surrogate). */
static int unicode_escape(parser *ps, unsigned *cp)
{
    unsigned hi;
    if (hex4(ps->p + 1, &hi))
        return syntax(ps, "bad \\u escape in string");
    ps->p += 5;
    *cp = hi;
    if (hi >= 0xD800 && hi <= 0xDBFF) {
        unsigned lo;
        if (ps->p[0] == '\\' && ps->p[1] == 'u' && hex4(ps->p + 2, &lo) == 0 && lo >= 0xDC00 &&
            lo <= 0xDFFF) {
            *cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
            ps->p += 6;
        } else {
            *cp = 0xFFFD;
        }
    } else if (hi >= 0xDC00 && hi <= 0xDFFF) {
        *cp = 0xFFFD;
    }
    return 0;
}

/* Parses the string at ps->p ('"') into the arena; *out gets it. */
static int parse_string(parser *ps, const char **out)
{
    const char *s = ps->p + 1;
    size_t raw = 0;
    while (s[raw] && s[raw] != '"' && s[raw] != '\n') /* an upper bound on the decoded size */
        raw += s[raw] == '\\' && s[raw + 1] ? 2 : 1;
    char *o = arena(ps->doc, raw + 1), *w = o;
    ps->p++;
    for (;;) {
        unsigned char c = (unsigned char)*ps->p;
        if (c == '\0' || c == '\n')
            return syntax(ps, "unterminated string");
        if (c < 0x20)
            return syntax(ps, "control character in string");
        if (c == '"')
            break;
        if (c != '\\') {
            *w++ = (char)c;
            ps->p++;
            continue;
        }
        ps->p++;
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        const char *e = *ps->p ? strchr(from, *ps->p) : NULL;
        if (*ps->p == 'u') {
            unsigned cp;
            if (unicode_escape(ps, &cp))
                return -1;
            w += put_utf8(w, cp); /* never longer than the 6 or 12 escape characters */
            continue;
        }
        if (!e)
            return syntax(ps, "bad escape in string");
        *w++ = to[e - from];
        ps->p++;
    }
    *w = '\0';
    ps->p++;
    *out = o;
    return 0;
}

/* JSON's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int parse_number(parser *ps, double *out)
{
    const char *s = ps->p;
    if (*s == '-')
        s++;
    if (*s == '0')
        s++;
    else if (isdigit((unsigned char)*s))
        while (isdigit((unsigned char)*s))
            s++;
    else
        return syntax(ps, "bad number");
    if (*s == '.') {
        if (!isdigit((unsigned char)*++s))
            return syntax(ps, "bad number");
        while (isdigit((unsigned char)*s))
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!isdigit((unsigned char)*s))
            return syntax(ps, "bad number");
        while (isdigit((unsigned char)*s))
            s++;
    }
    char *end;
    errno = 0;
    double v = strtod(ps->p, &end);
    if (end != s || errno == ERANGE || !isfinite(v))
        return syntax(ps, "bad number");
    *out = v;
    ps->p = end;
    return 0;
}

static int parse_value(parser *ps, sim_json *v);

/* The members or elements of the object or array at ps->p. */
static int parse_container(parser *ps, sim_json *v, char close)
{
    if (++ps->depth > SIM_JSON_MAX_DEPTH) {
        char msg[80];
        snprintf(msg, sizeof msg, "nesting deeper than %d levels", SIM_JSON_MAX_DEPTH);
        return syntax(ps, msg);
    }
    v->kind = close == '}' ? SIM_JSON_OBJ : SIM_JSON_ARR;
    sim_json **tail = &v->child;
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        ps->depth--;
        return 0;
    }
    for (;;) {
        skip_ws(ps);
        sim_json *ch = arena(ps->doc, sizeof *ch);
        memset(ch, 0, sizeof *ch);
        if (close == '}') {
            if (*ps->p != '"')
                return syntax(ps, "expected a string key");
            if (parse_string(ps, &ch->key))
                return -1;
            skip_ws(ps);
            if (*ps->p != ':')
                return syntax(ps, "expected ':' after key");
            ps->p++;
        }
        if (parse_value(ps, ch))
            return -1;
        *tail = ch;
        tail = &ch->next;
        v->n++;
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            ps->depth--;
            return 0;
        }
        return syntax(ps, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int parse_value(parser *ps, sim_json *v)
{
    skip_ws(ps);
    v->line = ps->line;
    char c = *ps->p;
    if (c == '{' || c == '[')
        return parse_container(ps, v, c == '{' ? '}' : ']');
    if (c == '"') {
        v->kind = SIM_JSON_STR;
        return parse_string(ps, &v->str);
    }
    if (strncmp(ps->p, "true", 4) == 0 || strncmp(ps->p, "false", 5) == 0) {
        v->kind = SIM_JSON_BOOL;
        v->num = c == 't';
        ps->p += c == 't' ? 4 : 5;
        return 0;
    }
    if (strncmp(ps->p, "null", 4) == 0) {
        v->kind = SIM_JSON_NULL;
        ps->p += 4;
        return 0;
    }
    if (c == '-' || isdigit((unsigned char)c)) {
        v->kind = SIM_JSON_NUM;
        return parse_number(ps, &v->num);
    }
    return syntax(ps, c ? "unexpected character" : "unexpected end of file");
}

sim_json_doc *sim_json_parse(const char *name, const char *text, char *why, size_t len)
{
    sim_json_doc *d = sim_xcalloc(1, sizeof *d);
    parser ps = {
        .p = text, .line_start = text, .line = 1, .name = name, .why = why, .len = len, .doc = d};
    d->root = arena(d, sizeof *d->root);
    memset(d->root, 0, sizeof *d->root);
    int rc = parse_value(&ps, d->root);
    if (rc == 0) {
        skip_ws(&ps);
        if (*ps.p != '\0')
            rc = syntax(&ps, "text after the end of the document");
    }
    if (rc != 0) {
        sim_json_free(d);
        return NULL;
    }
    return d;
}

const sim_json *sim_json_root(const sim_json_doc *d)
{
    return d ? d->root : NULL;
}

void sim_json_free(sim_json_doc *d)
{
    if (!d)
        return;
    for (chunk *c = d->chunks, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(d);
}

const sim_json *sim_json_get(const sim_json *o, const char *key)
{
    const sim_json *hit = NULL;
    if (!o || o->kind != SIM_JSON_OBJ)
        return NULL;
    for (const sim_json *m = o->child; m; m = m->next)
        if (strcmp(m->key, key) == 0)
            hit = m;
    return hit;
}

const char *sim_json_kind_name(sim_json_kind k)
{
    static const char *const names[] = {"null",     "a boolean", "a number",
                                        "a string", "an array",  "an object"};
    return (unsigned)k <= SIM_JSON_OBJ ? names[k] : "?";
}

/* ---- the in-place scan ---- */

const char *sim_json_skip_blanks(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* Skips a JSON string starting at the quote; NULL when unterminated. */
static const char *skip_string(const char *p)
{
    for (p++; *p; p++) {
        if (*p == '\\' && p[1])
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

/* Skips one JSON value; NULL when malformed. */
static const char *skip_value(const char *p)
{
    if (*p == '"')
        return skip_string(p);
    if (*p == '[' || *p == '{') {
        int depth = 0;
        for (; *p; p++) {
            if (*p == '"') {
                p = skip_string(p);
                if (!p)
                    return NULL;
                p--;
            } else if (*p == '[' || *p == '{') {
                depth++;
            } else if ((*p == ']' || *p == '}') && --depth == 0) {
                return p + 1;
            }
        }
        return NULL;
    }
    const char *s = p;
    while (*p && *p != ',' && *p != '}' && *p != ' ' && *p != '\t')
        p++;
    return p > s ? p : NULL;
}

/* One member "key": value at p; *k, *klen, *v, *ve get its key and value; the end, or NULL. */
static char *scan_member(char *p, char **k, size_t *klen, char **v, char **ve)
{
    if (*p != '"')
        return NULL;
    char *ke = (char *)skip_string(p);
    if (!ke)
        return NULL;
    *k = p + 1;
    *klen = (size_t)(ke - 1 - *k);
    p = (char *)sim_json_skip_blanks(ke);
    if (*p++ != ':')
        return NULL;
    *v = (char *)sim_json_skip_blanks(p);
    *ve = (char *)skip_value(*v);
    return *ve ? (char *)sim_json_skip_blanks(*ve) : NULL;
}

int sim_json_scan(char *line, const char *const *keys, int n, char **vals)
{
    char *p = (char *)sim_json_skip_blanks(line);
    if (*p++ != '{')
        return -1;
    for (;;) {
        char *k, *v, *ve;
        size_t klen;
        p = (char *)sim_json_skip_blanks(p);
        if (*p == '}')
            return 0;
        if (!(p = scan_member(p, &k, &klen, &v, &ve)))
            return -1;
        char sep = *p;
        if (sep != ',' && sep != '}')
            return -1;
        for (int i = 0; i < n; i++)
            if (keys[i] && strlen(keys[i]) == klen && !strncmp(k, keys[i], klen)) {
                *ve = '\0';
                vals[i] = v;
            }
        if (sep == '}')
            return 0;
        p++;
    }
}

/* ---- writing ---- */

void sim_json_write_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch == '\n')
            fputs("\\n", f);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* The comma and key before an item at the current depth. */
static void item(sim_jsonw *j, const char *key)
{
    if (j->count[j->depth]++)
        fputs(", ", j->f);
    if (key) {
        sim_json_write_str(j->f, key);
        fputs(": ", j->f);
    }
}

void sim_jsonw_begin(sim_jsonw *j, FILE *f)
{
    memset(j, 0, sizeof *j);
    j->f = f;
}

void sim_jsonw_open(sim_jsonw *j, const char *key, char bracket)
{
    item(j, key);
    fputc(bracket, j->f);
    if (j->depth + 1 < (int)(sizeof j->count / sizeof j->count[0]))
        j->depth++;
    j->count[j->depth] = 0;
}

void sim_jsonw_close(sim_jsonw *j, char bracket)
{
    fputc(bracket, j->f);
    if (j->depth > 0)
        j->depth--;
    if (j->depth == 0)
        fputc('\n', j->f);
}

void sim_jsonw_str(sim_jsonw *j, const char *key, const char *v)
{
    item(j, key);
    sim_json_write_str(j->f, v);
}

/* Writes member f of the struct at obj. */
static void write_field(sim_jsonw *j, const sim_jfield *f, const char *p)
{
    switch (f->kind) {
    case SIM_JF_INT:
        assert(f->size == sizeof(int32_t) || f->size == sizeof(int64_t));
        sim_jsonw_int(j, f->key,
                      f->size == sizeof(int32_t) ? *(const int32_t *)p : *(const int64_t *)p);
        return;
    case SIM_JF_NUM:
        sim_jsonw_num(j, f->key, *(const double *)p);
        return;
    case SIM_JF_STR:
        sim_jsonw_str(j, f->key, *(const char *const *)p);
        return;
    case SIM_JF_CHARS:
        sim_jsonw_str(j, f->key, p);
        return;
    }
    assert(!"unknown JSON field kind");
}

void sim_jsonw_fields(sim_jsonw *j, const sim_jfield *f, int n, const void *obj)
{
    for (int k = 0; k < n; k++)
        write_field(j, &f[k], (const char *)obj + f[k].offset);
}

void sim_jsonw_num(sim_jsonw *j, const char *key, double v)
{
    item(j, key);
    if (isfinite(v))
        fprintf(j->f, "%.17g", v);
    else
        fputs("null", j->f);
}

void sim_jsonw_int(sim_jsonw *j, const char *key, int64_t v)
{
    item(j, key);
    fprintf(j->f, "%lld", (long long)v);
}

void sim_jsonw_bool(sim_jsonw *j, const char *key, int v)
{
    item(j, key);
    fputs(v ? "true" : "false", j->f);
}
