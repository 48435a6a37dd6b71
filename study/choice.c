/*
 * choice.c: the choices a capacity search (or a recommendation) compares, from --compare:
 * values of one key, or named sets of several keys (a layout is TP with its EP and attention
 * DP); a second --compare makes the cross product. A choice is a list of "key=value" overrides
 * applied after the user's --set.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study_capacity.h"

/* s without its leading and trailing blanks, in place. */
static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* "P:D" -> *p, *d (each in [1, 4096]). 0, or -1. */
static int parse_ratio(const char *v, int *p, int *d)
{
    char tail;
    return sscanf(v, "%d:%d%c", p, d, &tail) == 2 && *p >= 1 && *d >= 1 && *p <= 4096 && *d <= 4096
               ? 0
               : -1;
}

static int add_set(study_choice *c, const char *key, const char *val, sim_err *err)
{
    if (c->nsets == STUDY_CHOICE_SETS)
        return sim_errf(err, "--compare: choice '%s' has more than %d keys", c->name,
                        STUDY_CHOICE_SETS);
    int w = snprintf(c->set[c->nsets], sizeof c->set[0], "%s=%s", key, val);
    if (w < 0 || (size_t)w >= sizeof c->set[0])
        return sim_errf(err, "--compare: '%s=%s' is too long", key, val);
    c->nsets++;
    return 0;
}

/* pd=P:D into c: both pools' replicas. */
static int add_ratio(study_choice *c, const char *val, sim_err *err)
{
    int p, d;
    char a[32], b[32];
    if (parse_ratio(val, &p, &d) != 0)
        return sim_errf(err,
                        "--compare pd: '%s' is not a prefill:decode replica ratio such as 1:2 "
                        "(two integers >= 1)",
                        val);
    snprintf(a, sizeof a, "%d", p);
    snprintf(b, sizeof b, "%d", d);
    if (add_set(c, "prefill.replicas", a, err) != 0)
        return -1;
    return add_set(c, "decode.replicas", b, err);
}

/* key=val into c: pd=P:D sets both pools' replicas, scheduler is scheduler.name. */
static int add_pair(study_choice *c, const char *key, const char *val, sim_err *err)
{
    if (!*key || !*val)
        return sim_errf(err, "--compare: expected KEY=VALUE, got '%s=%s'", key, val);
    if (strcmp(key, "pd") == 0)
        return add_ratio(c, val, err);
    return add_set(c, strcmp(key, "scheduler") == 0 ? "scheduler.name" : key, val, err);
}

/* The choice key=val, named by val, appended to out's *n (at most max). 0, or -1 with err. */
static int value_choice(const char *key, const char *val, study_choice *out, int max, int *n,
                        sim_err *err)
{
    if (*n == max)
        return sim_errf(err, "--compare: at most %d choices", max);
    study_choice *c = &out[*n];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", val);
    if (add_pair(c, key, val, err) != 0)
        return -1;
    (*n)++;
    return 0;
}

/* "KEY=V1,V2,...": one choice per value, named by it. */
static int parse_values(char *s, study_choice *out, int max, int *n, sim_err *err)
{
    char *eq = strchr(s, '=');
    if (!eq || eq == s || !eq[1])
        return sim_errf(
            err, "--compare expects KEY=V1,V2,... or 'NAME: K=V,K=V; NAME2: K=V'; got '%s'", s);
    *eq = '\0';
    char *key = trim(s), *save = NULL;
    for (char *t = strtok_r(eq + 1, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (value_choice(key, trim(t), out, max, n, err) != 0)
            return -1;
    return 0;
}

/* The NAME of "NAME: K=V,K=V" (or the whole text, when it has no name) into c->name; returns
 * the K=V list, or NULL with err for an empty name. */
static char *choice_name(char *s, study_choice *c, sim_err *err)
{
    char *colon = strchr(s, ':'), *eq = strchr(s, '=');
    if (!colon || (eq && eq < colon)) {
        snprintf(c->name, sizeof c->name, "%s", trim(s));
        return s;
    }
    *colon = '\0';
    snprintf(c->name, sizeof c->name, "%s", trim(s));
    if (!c->name[0]) {
        sim_errf(err, "--compare: a choice has an empty name before ':'");
        return NULL;
    }
    return colon + 1;
}

/* "NAME: K=V,K=V" (or "K=V,K=V", named by its text) into c. */
static int parse_named(char *s, study_choice *c, sim_err *err)
{
    memset(c, 0, sizeof *c);
    char *body = choice_name(s, c, err), *save = NULL;
    if (!body)
        return -1;
    for (char *t = strtok_r(body, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *e = strchr(t, '=');
        if (!e)
            return sim_errf(err, "--compare: choice '%s': expected KEY=VALUE, got '%s'", c->name,
                            trim(t));
        *e = '\0';
        if (add_pair(c, trim(t), trim(e + 1), err) != 0)
            return -1;
    }
    if (c->nsets == 0)
        return sim_errf(err, "--compare: choice '%s' sets no key", c->name);
    return 0;
}

/* "NAME: K=V,K=V; NAME2: K=V": one choice per ';'-separated part, into out[max]. */
static int parse_named_list(char *s, study_choice *out, int max, int *n, sim_err *err)
{
    char *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(s, ";", &save); t && rc == 0; t = strtok_r(NULL, ";", &save)) {
        if (!*trim(t))
            continue;
        if (*n == max)
            rc = sim_errf(err, "--compare: at most %d choices", max);
        else if ((rc = parse_named(t, &out[*n], err)) == 0)
            (*n)++;
    }
    return rc;
}

/* -1 with err when two of the n choices have the same name. */
static int check_unique(const study_choice *out, int n, sim_err *err)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(out[i].name, out[j].name) == 0)
                return sim_errf(err, "--compare: two choices are named '%s'", out[i].name);
    return 0;
}

/* The choices one --compare argument names, into out[max] (*n of them). */
static int parse_arg(const char *arg, study_choice *out, int max, int *n, sim_err *err)
{
    char *copy = sim_xstrdup(arg);
    const char *colon = strchr(arg, ':'), *eq = strchr(arg, '=');
    *n = 0;
    int rc = strchr(arg, ';') || (colon && eq && colon < eq)
                 ? parse_named_list(copy, out, max, n, err)
                 : parse_values(copy, out, max, n, err);
    free(copy);
    if (rc == 0 && *n == 0)
        rc = sim_errf(err, "--compare '%s' names no choice", arg);
    return rc == 0 ? check_unique(out, *n, err) : rc;
}

/* a x b into out: names "a/b", a's overrides then b's. */
static int cross(const study_choice *a, const study_choice *b, study_choice *out, sim_err *err)
{
    *out = *a;
    int w = snprintf(out->name, sizeof out->name, "%s/%s", a->name, b->name);
    if (w < 0 || (size_t)w >= sizeof out->name)
        return sim_errf(err, "--compare: the name '%s/%s' is too long", a->name, b->name);
    for (int k = 0; k < b->nsets; k++) {
        if (out->nsets == STUDY_CHOICE_SETS)
            return sim_errf(err, "--compare: '%s' has more than %d keys", out->name,
                            STUDY_CHOICE_SETS);
        memcpy(out->set[out->nsets++], b->set[k], sizeof b->set[k]);
    }
    return 0;
}

/* out[*n] x fresh[nf] into out (at most max), in place of out's choices. */
static int cross_all(study_choice *out, int max, int *n, const study_choice *fresh, int nf,
                     sim_err *err)
{
    study_choice *prod = sim_xcalloc((size_t)max, sizeof *prod);
    int np = 0, rc = 0;
    for (int i = 0; i < *n && rc == 0; i++)
        for (int j = 0; j < nf && rc == 0; j++)
            rc = cross(&out[i], &fresh[j], &prod[np++], err);
    if (rc == 0) {
        memcpy(out, prod, (size_t)np * sizeof *prod);
        *n = np;
    }
    free(prod);
    return rc;
}

int study_choices_add(study_choice *out, int max, int *n, const char *arg, sim_err *err)
{
    study_choice *fresh = sim_xcalloc((size_t)max, sizeof *fresh);
    int nf = 0, rc = parse_arg(arg, fresh, max, &nf, err);
    if (rc == 0 && *n == 0) {
        memcpy(out, fresh, (size_t)nf * sizeof *fresh);
        *n = nf;
    } else if (rc == 0 && (int64_t)*n * nf > max) {
        rc = sim_errf(err, "--compare: the cross product has %d x %d choices, more than %d", *n, nf,
                      max);
    } else if (rc == 0) {
        rc = cross_all(out, max, n, fresh, nf, err);
    }
    free(fresh);
    return rc;
}

const char *study_choice_sets(const study_choice *c, char *buf, size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    for (int k = 0; k < c->nsets && used + 1 < len; k++) {
        int w = snprintf(buf + used, len - used, "%s%s", k ? ", " : "", c->set[k]);
        if (w < 0)
            break;
        used += (size_t)w < len - used ? (size_t)w : len - used - 1;
    }
    return buf;
}
