/*
 * keys.c: settings tables (keys.h): checking a value against its row, storing it, describing
 * a row's range for messages and docs, and finding rows.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keys.h"
#include "sim.h"

int eng_key_bool(const char *s)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (strcmp(s, yes[i]) == 0)
            return 1;
        if (strcmp(s, no[i]) == 0)
            return 0;
    }
    return -1;
}

int eng_key_choice(const char *choices, const char *word)
{
    size_t n = strlen(word);
    int i = 0;
    for (const char *c = choices; c && *c; i++) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        if (len == n && strncmp(c, word, n) == 0)
            return i;
        if (!bar)
            break;
        c = bar + 1;
    }
    return -1;
}

/* "a|b|c" as "a, b, c". */
static void choice_list(const char *choices, char *buf, size_t len)
{
    size_t off = 0;
    for (const char *c = choices; *c && off + 1 < len; c++)
        off += (size_t)snprintf(buf + off, len - off, *c == '|' ? ", " : "%c", *c);
    buf[off < len ? off : len - 1] = '\0';
}

static int lo_ok(const eng_key *k, double v)
{
    return k->flags & ENG_KEY_LO_OPEN ? v > k->lo : v >= k->lo;
}

static int hi_ok(const eng_key *k, double v)
{
    if (isinf(k->hi))
        return 1;
    return k->flags & ENG_KEY_HI_OPEN ? v < k->hi : v <= k->hi;
}

const char *eng_key_range(const eng_key *k, char *buf, size_t len)
{
    switch (k->type) {
    case ENG_KEY_INT:
        if (k->flags & ENG_KEY_U64)
            snprintf(buf, len, ">= 0");
        else if (isinf(k->hi))
            snprintf(buf, len, ">= %.0f", k->lo);
        else
            snprintf(buf, len, "[%.0f, %.0f]%s", k->lo, k->hi,
                     k->flags & ENG_KEY_POW2 ? ", a power of two" : "");
        break;
    case ENG_KEY_NUM:
        if (isinf(k->hi))
            snprintf(buf, len, "%s %g", k->flags & ENG_KEY_LO_OPEN ? ">" : ">=", k->lo);
        else
            snprintf(buf, len, "%c%g, %g%c", k->flags & ENG_KEY_LO_OPEN ? '(' : '[', k->lo, k->hi,
                     k->flags & ENG_KEY_HI_OPEN ? ')' : ']');
        break;
    case ENG_KEY_BOOL:
        snprintf(buf, len, "true|false");
        break;
    case ENG_KEY_ENUM:
        snprintf(buf, len, "%s", k->choices);
        break;
    case ENG_KEY_STR:
    case ENG_KEY_MAP:
    case ENG_KEY_INCLUDE:
        buf[0] = '\0'; /* no range */
        break;
    }
    return buf;
}

const char *eng_key_expects(const eng_key *k, char *buf, size_t len)
{
    char r[200];
    eng_key_range(k, r, sizeof r);
    switch (k->type) {
    case ENG_KEY_INT:
        if (k->flags & ENG_KEY_POW2)
            snprintf(buf, len, "a power of two in [%.0f, %.0f]", k->lo, k->hi);
        else
            snprintf(buf, len, "an integer %s%s",
                     isinf(k->hi) || k->flags & ENG_KEY_U64 ? "" : "in ", r);
        break;
    case ENG_KEY_NUM:
        snprintf(buf, len, "a number %s%s", isinf(k->hi) ? "" : "in ", r);
        break;
    case ENG_KEY_BOOL:
        snprintf(buf, len, "true or false");
        break;
    case ENG_KEY_ENUM:
        choice_list(k->choices, r, sizeof r);
        snprintf(buf, len, "one of %s", r);
        break;
    case ENG_KEY_STR:
        snprintf(buf, len, "text");
        break;
    case ENG_KEY_MAP:
    case ENG_KEY_INCLUDE:
        snprintf(buf, len, "a map");
        break;
    }
    return buf;
}

static int parse_int(const eng_key *k, const char *text, eng_key_val *out)
{
    char *end;
    errno = 0;
    if (k->flags & ENG_KEY_U64) {
        out->u = strtoull(text, &end, 10);
        out->num = (double)out->u;
        return !*text || *end || errno || text[0] == '-' ? -1 : 0;
    }
    long long v = strtoll(text, &end, 10);
    if (!*text || *end || errno)
        return -1;
    out->i = v;
    out->num = (double)v;
    if (!lo_ok(k, out->num) || !hi_ok(k, out->num))
        return -1;
    return k->flags & ENG_KEY_POW2 && (v & (v - 1)) ? -1 : 0;
}

static int parse_num(const eng_key *k, const char *text, eng_key_val *out)
{
    char *end;
    double v = strtod(text, &end);
    out->num = v;
    return !*text || *end || !isfinite(v) || !lo_ok(k, v) || !hi_ok(k, v) ? -1 : 0;
}

int eng_key_parse(const eng_key *k, const char *text, eng_key_val *out, char *why, size_t len)
{
    char want[400];
    int rc = -1, b;
    memset(out, 0, sizeof *out);
    out->s = text;
    switch (k->type) {
    case ENG_KEY_INT:
        rc = parse_int(k, text, out);
        break;
    case ENG_KEY_NUM:
        rc = parse_num(k, text, out);
        break;
    case ENG_KEY_BOOL:
        b = eng_key_bool(text);
        out->num = b;
        rc = b < 0 ? -1 : 0;
        break;
    case ENG_KEY_ENUM:
        out->num = eng_key_choice(k->choices, text);
        if (out->num >= 0)
            return 0;
        choice_list(k->choices, want, sizeof want);
        snprintf(why, len, "unknown %s '%s' (valid: %s)", k->name, text, want);
        return -1;
    case ENG_KEY_STR:
        if (k->size == 0 || strlen(text) < k->size)
            return 0;
        snprintf(why, len, "longer than %zu characters", k->size - 1);
        return -1;
    case ENG_KEY_MAP:
    case ENG_KEY_INCLUDE:
        snprintf(why, len, "expected a map, got a single value");
        return -1;
    }
    if (rc)
        snprintf(why, len, "expected %s, got '%s'", eng_key_expects(k, want, sizeof want), text);
    return rc;
}

void eng_key_store(const eng_key *k, void *obj, const eng_key_val *v)
{
    char *at = (char *)obj + k->off;
    if (k->set) {
        k->set(obj, v->num);
        return;
    }
    if (k->size == 0 || k->type == ENG_KEY_MAP || k->type == ENG_KEY_INCLUDE)
        return;
    if (k->type == ENG_KEY_STR || (k->type == ENG_KEY_ENUM && k->flags & ENG_KEY_TEXT)) {
        snprintf(at, k->size, "%s", v->s);
    } else if (k->type == ENG_KEY_NUM || k->flags & ENG_KEY_DOUBLE) {
        SIM_CHECK(NULL, k->size == sizeof(double));
        memcpy(at, &v->num, sizeof(double));
    } else if (k->type == ENG_KEY_INT && k->size == sizeof(int64_t)) {
        int64_t x = k->flags & ENG_KEY_U64 ? (int64_t)v->u : v->i;
        memcpy(at, &x, sizeof x);
    } else {
        SIM_CHECK(NULL, k->size == sizeof(int32_t)); /* int32_t, int, an enum */
        int32_t x = k->type == ENG_KEY_INT ? (int32_t)v->i : (int32_t)v->num;
        memcpy(at, &x, sizeof x);
    }
}

void eng_keys_defaults(const eng_key *keys, void *obj)
{
    for (const eng_key *k = keys; k->name; k++) {
        eng_key_val v;
        char why[200];
        if (k->type == ENG_KEY_INCLUDE ||
            (k->type == ENG_KEY_MAP && k->sub && !(k->flags & ENG_KEY_CODE))) {
            eng_keys_defaults(k->sub, (char *)obj + k->off);
            continue;
        }
        if (!k->def || k->def[0] == '(' || (!k->set && k->size == 0) || k->type == ENG_KEY_MAP)
            continue;
        /* a default the row refuses is a defect of the table */
        SIM_CHECK(NULL, eng_key_parse(k, k->def, &v, why, sizeof why) == 0);
        eng_key_store(k, obj, &v);
    }
}

int eng_key_applies(const eng_key *k, const char *sel)
{
    return !k->when || (sel && eng_key_choice(k->when, sel) >= 0);
}

const eng_key *eng_key_find(const eng_key *keys, const char *name, const char *sel, size_t *off)
{
    for (const eng_key *k = keys; k->name; k++) {
        if (k->type == ENG_KEY_INCLUDE) {
            size_t sub = 0;
            const eng_key *f = eng_key_find(k->sub, name, sel, &sub);
            if (f) {
                *off = k->off + sub;
                return f;
            }
        } else if (strcmp(k->name, name) == 0 && eng_key_applies(k, sel)) {
            *off = 0;
            return k;
        }
    }
    return NULL;
}

const eng_key *eng_key_sub(const eng_key *keys, const char *name)
{
    size_t off;
    const eng_key *k = eng_key_find(keys, name, NULL, &off);
    SIM_CHECK(NULL, k && k->sub);
    return k->sub;
}

/* Appends the applying names of keys to buf at *off (no name twice). */
static void names_into(const eng_key *keys, const eng_key *all, const char *sel, char *buf,
                       size_t len, size_t *off)
{
    for (const eng_key *k = keys; k->name && *off + 1 < len; k++) {
        size_t at = 0;
        if (k->type == ENG_KEY_INCLUDE)
            names_into(k->sub, all, sel, buf, len, off);
        else if (eng_key_applies(k, sel) && eng_key_find(all, k->name, sel, &at) == k)
            *off += (size_t)snprintf(buf + *off, len - *off, "%s%s", *off ? ", " : "", k->name);
    }
}

const char *eng_key_names(const eng_key *keys, const char *sel, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    names_into(keys, keys, sel, buf, len, &off);
    return buf;
}
