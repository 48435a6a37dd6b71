/*
 * curve.c: measured speculative-decoding acceptance curves: a YAML file per model and drafter
 * giving the mean acceptance length (AL) per num_speculative_tokens, for thinking on and off, as
 * ../shared/data/speculative/ holds them (InferenceX's golden AL distributions):
 *
 *     deepseek-v4-pro:
 *       thinking_on: {1: 1.79, 2: 2.27, ...}
 *       thinking_off: {1: 1.92, ...}
 *
 * The file is read whole and checked: one model key, series named thinking_on / thinking_off,
 * keys whole numbers, values lengths of at least 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scn_int.h"

/* The value of key k in a series map: 0 with *al, 1 when absent, -1 on a bad entry. */
static int series_value(const char *path, const scn_node *series, int32_t k, double *al, char *keys,
                        size_t klen, sim_err *err)
{
    int found = 1;
    size_t off = 0;
    keys[0] = '\0';
    for (const scn_node *e = series->first; e; e = e->next) {
        char *end;
        long key = strtol(e->key, &end, 10);
        double v = e->kind == SCN_NODE_SCALAR ? strtod(e->text, NULL) : -1;
        if (*end || key < 1 || e->kind != SCN_NODE_SCALAR || !(v >= 1))
            return sim_errf(err,
                            "%s:%d: %s.%s: expected a draft length (a whole number >= 1) and a "
                            "mean acceptance length >= 1",
                            path, e->line, series->key, e->key);
        if (off < klen)
            off += (size_t)snprintf(keys + off, klen - off, "%s%ld", off ? ", " : "", key);
        if (key == k) {
            *al = v;
            found = 0;
        }
    }
    return found;
}

/* The series of model node m that thinking names (NULL: the only one), or NULL with err. */
static const scn_node *pick_series(const char *path, const scn_node *m, const char *thinking,
                                   sim_err *err)
{
    const scn_node *series = NULL;
    char names[128] = "";
    size_t off = 0;
    for (const scn_node *s = m->first; s; s = s->next) {
        if (strcmp(s->key, "thinking_on") != 0 && strcmp(s->key, "thinking_off") != 0) {
            sim_errf(err, "%s:%d: %s.%s: unknown series (expected thinking_on or thinking_off)",
                     path, s->line, m->key, s->key);
            return NULL;
        }
        off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", off ? ", " : "",
                                strcmp(s->key, "thinking_on") == 0 ? "on" : "off");
        if (thinking ? strcmp(s->key + 9, thinking) == 0 : !series)
            series = s;
        if (!thinking && s != m->first) {
            sim_errf(err, "%s: %s has the series thinking: %s; say which (acceptance.thinking)",
                     path, m->key, names);
            return NULL;
        }
    }
    if (!series)
        sim_errf(err, "%s: %s has no thinking_%s series (it has: %s)", path, m->key,
                 thinking ? thinking : "on", *names ? names : "none");
    return series;
}

/* The acceptance length of k draft tokens in the series, checked against k + 1. */
static int series_length(const char *path, const scn_node *m, const scn_node *series, int32_t k,
                         double *al, sim_err *err)
{
    if (series->kind != SCN_NODE_MAP)
        return sim_errf(err, "%s:%d: %s.%s: expected a map of draft lengths to acceptance lengths",
                        path, series->line, m->key, series->key);
    char keys[256];
    int r = series_value(path, series, k, al, keys, sizeof keys, err);
    if (r < 0)
        return -1;
    if (r > 0)
        return sim_errf(err, "%s: %s %s has no acceptance length for %d draft tokens (it has: %s)",
                        path, m->key, series->key, k, keys);
    if (*al > k + 1)
        return sim_errf(err, "%s: %s %s: acceptance length %g for %d draft tokens exceeds %d", path,
                        m->key, series->key, *al, k, k + 1);
    return 0;
}

int scn_curve_length(const char *path, const char *thinking, int32_t k, double *al, char *model,
                     size_t mlen, sim_err *err)
{
    char *text = scn_read_text(path, err);
    if (!text)
        return -1;
    scn_node *root = NULL;
    int rc = -1;
    if (scn_tree_parse(path, text, strlen(text), &root, err))
        goto done;
    const scn_node *m = root ? root->first : NULL;
    if (!root || root->kind != SCN_NODE_MAP || !m || m->next || m->kind != SCN_NODE_MAP) {
        sim_errf(err,
                 "%s: expected one model name mapping to its series (thinking_on, "
                 "thinking_off)",
                 path);
        goto done;
    }
    snprintf(model, mlen, "%s", m->key);
    const scn_node *series = pick_series(path, m, thinking, err);
    if (series && series_length(path, m, series, k, al, err) == 0)
        rc = 0;
done:
    scn_tree_free(root);
    free(text);
    return rc;
}
