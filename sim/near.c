/*
 * near.c: the valid names nearest to a misspelt one, for error messages ("unknown GPU 'h10';
 * nearest: h100-sxm, h20, h100-pcie"). Edit distance (Levenshtein, case-insensitive), with a
 * name that contains the given one as a prefix counted nearer than its distance says.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim.h"

#define MAXLEN 128

/* Levenshtein distance of a and b (case-insensitive), each cut at MAXLEN characters. */
static int distance(const char *a, const char *b)
{
    int la = (int)strnlen(a, MAXLEN), lb = (int)strnlen(b, MAXLEN);
    int prev[MAXLEN + 1], cur[MAXLEN + 1];
    for (int j = 0; j <= lb; j++)
        prev[j] = j;
    for (int i = 1; i <= la; i++) {
        cur[0] = i;
        for (int j = 1; j <= lb; j++) {
            int sub = prev[j - 1] +
                      (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            int del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (size_t)(lb + 1) * sizeof *prev);
    }
    return prev[lb];
}

/* How far valid is from name: its edit distance, or 0 when it starts with name (so "h100"
 * is nearest to "h100-sxm" and "h100-pcie"). */
static int score(const char *name, const char *valid)
{
    size_t n = strlen(name);
    if (n >= 2 && strncasecmp(valid, name, n) == 0)
        return 0;
    return distance(name, valid);
}

const char *sim_nearest(const char *name, const char *const *valid, int n, int k, char *buf,
                        size_t len)
{
    int *d = sim_xmalloc((size_t)(n > 0 ? n : 1) * sizeof *d);
    int limit = (int)strlen(name) / 3 > 1 ? (int)strlen(name) / 3 : 1;
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    for (int i = 0; i < n; i++)
        d[i] = score(name, valid[i]);
    for (int shown = 0; shown < k; shown++) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (d[i] <= limit && (best < 0 || d[i] < d[best]))
                best = i;
        if (best < 0)
            break;
        if (used + 1 < len)
            used +=
                (size_t)snprintf(buf + used, len - used, "%s%s", shown ? ", " : "", valid[best]);
        if (used >= len)
            used = len - 1;
        d[best] = limit + 1;
    }
    free(d);
    return buf;
}

int sim_name_index(const char *name, const char *const *valid, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(valid[i], name) == 0)
            return i;
    return -1;
}
