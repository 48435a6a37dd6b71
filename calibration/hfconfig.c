/*
 * hfconfig.c: reads a Hugging Face config.json into an eng_model.
 *
 * A small JSON reader, enough for config files: it checks the whole document's syntax and keeps
 * the top-level members whose values are numbers, booleans, strings or null (nested objects and
 * arrays such as rope_scaling or architectures are parsed and skipped). Each kept member records
 * the line it was on, so errors can point at it. Nothing outlives a call except *out.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "sim.h"

enum { J_NUM, J_BOOL, J_STR, J_NULL, J_OTHER };

typedef struct member {
    char key[64];
    int type;
    double num;   /* J_NUM, and J_BOOL as 0/1 */
    char str[64]; /* J_STR, cut at 63 bytes */
    int line;
} member;

typedef struct parser {
    const char *p, *start;
    const char *name; /* the file, for messages */
    int depth;
    member *m;
    int n, cap;
    char *why;
    size_t len;
} parser;

#define MAX_DEPTH 64

static void where(const parser *ps, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *q = ps->start; q < at; q++) {
        if (*q == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

static int syntax(parser *ps, const char *what)
{
    int line, col;
    where(ps, ps->p, &line, &col);
    if (ps->len)
        snprintf(ps->why, ps->len, "%s:%d:%d: %s", ps->name, line, col, what);
    return -1;
}

static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->p++;
}

/* Parses a string at ps->p (which is '"'); copies up to cap-1 bytes into out when out is not
 * NULL. Escapes are checked; \uXXXX is kept as '?' (config keys and values we use are ASCII). */
static int parse_string(parser *ps, char *out, size_t cap)
{
    size_t n = 0;
    ps->p++;
    for (;;) {
        char c = *ps->p;
        if (c == '\0' || c == '\n')
            return syntax(ps, "unterminated string");
        if (c == '"')
            break;
        if (c == '\\') {
            ps->p++;
            c = *ps->p;
            if (c == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)ps->p[i]))
                        return syntax(ps, "bad \\u escape in string");
                ps->p += 4;
                c = '?';
            } else if (strchr("\"\\/bfnrt", c) == NULL || c == '\0') {
                return syntax(ps, "bad escape in string");
            }
        }
        if (out && n + 1 < cap)
            out[n++] = c;
        ps->p++;
    }
    ps->p++;
    if (out && cap)
        out[n] = '\0';
    return 0;
}

static int parse_number(parser *ps, double *out)
{
    const char *s = ps->p;
    if (*s == '-')
        s++;
    if (!isdigit((unsigned char)*s))
        return syntax(ps, "bad number");
    char *end;
    errno = 0;
    double v = strtod(ps->p, &end);
    if (end == ps->p || errno == ERANGE || !isfinite(v))
        return syntax(ps, "bad number");
    *out = v;
    ps->p = end;
    return 0;
}

static int parse_value(parser *ps, member *m);

static int parse_container(parser *ps, char close)
{
    if (++ps->depth > MAX_DEPTH)
        return syntax(ps, "nesting too deep");
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        ps->depth--;
        return 0;
    }
    for (;;) {
        skip_ws(ps);
        if (close == '}') {
            if (*ps->p != '"')
                return syntax(ps, "expected a string key");
            if (parse_string(ps, NULL, 0))
                return -1;
            skip_ws(ps);
            if (*ps->p != ':')
                return syntax(ps, "expected ':' after key");
            ps->p++;
        }
        if (parse_value(ps, NULL))
            return -1;
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

/* Parses one value; when m is not NULL, records its type and scalar value there. */
static int parse_value(parser *ps, member *m)
{
    skip_ws(ps);
    int type = J_OTHER;
    double num = 0;
    char c = *ps->p;
    if (c == '{' || c == '[') {
        if (parse_container(ps, c == '{' ? '}' : ']'))
            return -1;
    } else if (c == '"') {
        type = J_STR;
        if (parse_string(ps, m ? m->str : NULL, m ? sizeof m->str : 0))
            return -1;
    } else if (strncmp(ps->p, "true", 4) == 0 || strncmp(ps->p, "false", 5) == 0) {
        type = J_BOOL;
        num = c == 't';
        ps->p += c == 't' ? 4 : 5;
    } else if (strncmp(ps->p, "null", 4) == 0) {
        type = J_NULL;
        ps->p += 4;
    } else if (c == '-' || isdigit((unsigned char)c)) {
        type = J_NUM;
        if (parse_number(ps, &num))
            return -1;
    } else {
        return syntax(ps, c ? "unexpected character" : "unexpected end of file");
    }
    if (m) {
        m->type = type;
        m->num = num;
    }
    return 0;
}

static int parse_document(parser *ps)
{
    skip_ws(ps);
    if (*ps->p != '{')
        return syntax(ps, "expected '{' (a config.json is one JSON object)");
    ps->p++;
    skip_ws(ps);
    if (*ps->p == '}') {
        ps->p++;
    } else {
        for (;;) {
            skip_ws(ps);
            if (*ps->p != '"')
                return syntax(ps, "expected a string key");
            if (ps->n == ps->cap) {
                ps->cap = ps->cap ? 2 * ps->cap : 32;
                ps->m = sim_xrealloc(ps->m, (size_t)ps->cap * sizeof *ps->m);
            }
            member *m = &ps->m[ps->n];
            memset(m, 0, sizeof *m);
            int col;
            where(ps, ps->p, &m->line, &col);
            if (parse_string(ps, m->key, sizeof m->key))
                return -1;
            skip_ws(ps);
            if (*ps->p != ':')
                return syntax(ps, "expected ':' after key");
            ps->p++;
            if (parse_value(ps, m))
                return -1;
            ps->n++;
            skip_ws(ps);
            if (*ps->p == ',') {
                ps->p++;
                continue;
            }
            if (*ps->p == '}') {
                ps->p++;
                break;
            }
            return syntax(ps, "expected ',' or '}'");
        }
    }
    skip_ws(ps);
    if (*ps->p != '\0')
        return syntax(ps, "text after the closing '}'");
    return 0;
}

/* The last member named key (JSON leaves duplicates to the reader; later wins, as Python's). */
static const member *find(const parser *ps, const char *key)
{
    for (int i = ps->n - 1; i >= 0; i--)
        if (strcmp(ps->m[i].key, key) == 0)
            return &ps->m[i];
    return NULL;
}

/* Reads a positive integer key into *out. required = 0 leaves *out alone when the key is absent
 * or null. */
static int get_int(parser *ps, const char *key, int required, int32_t *out)
{
    const member *m = find(ps, key);
    if (!m || m->type == J_NULL) {
        if (!required)
            return 0;
        snprintf(ps->why, ps->len, "%s: missing key \"%s\"", ps->name, key);
        return -1;
    }
    if (m->type != J_NUM || m->num != floor(m->num) || m->num < 1 || m->num > 2147483647.0) {
        snprintf(ps->why, ps->len, "%s:%d: key \"%s\" must be a positive integer", ps->name,
                 m->line, key);
        return -1;
    }
    *out = (int32_t)m->num;
    return 0;
}

static int get_bool(parser *ps, const char *key, int32_t *out)
{
    const member *m = find(ps, key);
    if (!m || m->type == J_NULL)
        return 0;
    if (m->type != J_BOOL) {
        snprintf(ps->why, ps->len, "%s:%d: key \"%s\" must be true or false", ps->name, m->line,
                 key);
        return -1;
    }
    *out = (int32_t)m->num;
    return 0;
}

/* Fills *out from the parsed members. */
static int extract(parser *ps, eng_model *out)
{
    const member *mt = find(ps, "model_type");
    int opt = mt && mt->type == J_STR && strcmp(mt->str, "opt") == 0;
    int qwen2 = mt && mt->type == J_STR && strcmp(mt->str, "qwen2") == 0;
    out->gated_mlp = !opt;        /* Llama/Mistral/Qwen2: SwiGLU; OPT: ReLU */
    out->tied_embeddings = opt;   /* transformers' defaults: OPT ties, the others do not */
    out->qkv_bias = opt || qwen2; /* OPT: enable_bias; Qwen2: biased QKV */
    if (get_int(ps, "num_hidden_layers", 1, &out->layers) ||
        get_int(ps, "hidden_size", 1, &out->hidden) ||
        get_int(ps, "num_attention_heads", 1, &out->heads) ||
        get_int(ps, opt ? "ffn_dim" : "intermediate_size", 1, &out->intermediate) ||
        get_int(ps, "vocab_size", 1, &out->vocab) ||
        get_int(ps, "max_position_embeddings", 1, &out->max_context))
        return -1;
    out->kv_heads = out->heads;
    out->head_dim = out->hidden / out->heads;
    if (get_int(ps, "num_key_value_heads", 0, &out->kv_heads) ||
        get_int(ps, "head_dim", 0, &out->head_dim) ||
        get_bool(ps, "tie_word_embeddings", &out->tied_embeddings) ||
        get_bool(ps, opt ? "enable_bias" : "attention_bias", &out->qkv_bias))
        return -1;
    const member *h = find(ps, "num_attention_heads");
    if (!find(ps, "head_dim") && out->hidden % out->heads != 0) {
        snprintf(ps->why, ps->len,
                 "%s:%d: hidden_size %d is not a multiple of num_attention_heads %d and no "
                 "head_dim is given",
                 ps->name, h->line, out->hidden, out->heads);
        return -1;
    }
    if (out->heads % out->kv_heads != 0) {
        const member *k = find(ps, "num_key_value_heads");
        snprintf(ps->why, ps->len,
                 "%s:%d: num_key_value_heads %d does not divide num_attention_heads %d", ps->name,
                 k ? k->line : h->line, out->kv_heads, out->heads);
        return -1;
    }
    return 0;
}

/* The model's name: the directory holding the file, else the file name itself. */
static void model_name(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    const char *b = path, *e = path + strlen(path);
    if (slash) {
        e = slash;
        const char *prev = e;
        while (prev > path && prev[-1] != '/')
            prev--;
        b = prev;
        if (b == e) { /* "/config.json" or "config.json" at a root */
            b = slash + 1;
            e = path + strlen(path);
        }
    }
    size_t n = (size_t)(e - b) < cap - 1 ? (size_t)(e - b) : cap - 1;
    memcpy(out, b, n);
    out[n] = '\0';
}

int cal_model_from_config_text(const char *name, const char *text, eng_model *out, char *why,
                               size_t len)
{
    parser ps = {.p = text, .start = text, .name = name, .why = why, .len = len};
    memset(out, 0, sizeof *out);
    int rc = parse_document(&ps);
    if (rc == 0)
        rc = extract(&ps, out);
    if (rc == 0)
        model_name(name, out->name, sizeof out->name);
    free(ps.m);
    return rc;
}

int cal_model_from_config_json(const char *path, eng_model *out, char *why, size_t len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, len, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, n = 0;
    char *text = sim_xmalloc(cap);
    for (;;) {
        n += fread(text + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        cap *= 2;
        text = sim_xrealloc(text, cap);
    }
    int bad = ferror(f);
    fclose(f);
    text[n] = '\0';
    int rc;
    if (bad)
        rc = -1, snprintf(why, len, "%s: read error", path);
    else if (strlen(text) != n)
        rc = -1, snprintf(why, len, "%s: contains a NUL byte; not a JSON text file", path);
    else
        rc = cal_model_from_config_text(path, text, out, why, len);
    free(text);
    return rc;
}
