/*
 * csv.c: splitting a CSV line in place (csv.h).
 */
#include <string.h>

#include "csv.h"

int sim_csv_width(const char *line)
{
    int n = 1;
    for (; *line; line++)
        n += *line == ',';
    return n;
}

static int blank(char c)
{
    return c == ' ' || c == '\t';
}

/* A quoted field at p (the quote): unquoted into out; *end gets where it stops (a comma or the
 * end of the line). 0, or -1 with why. */
static int quoted(char *p, char *out, char **end, unsigned flags, const char **why)
{
    for (p++;; p++) {
        if (*p == '\0') {
            *why = "a quoted field is not closed";
            return -1;
        }
        if (*p == '"' && p[1] == '"')
            *out++ = *p++;
        else if (*p == '"')
            break;
        else
            *out++ = *p;
    }
    *out = '\0';
    for (p++; flags & SIM_CSV_TRIM && blank(*p);)
        p++;
    if (*p != ',' && *p != '\0') {
        *why = "text after a quoted field";
        return -1;
    }
    *end = p;
    return 0;
}

int sim_csv_split(char *line, unsigned flags, char **fields, int max, const char **why)
{
    char *p = line;
    int n = 0;
    for (;;) {
        while (flags & SIM_CSV_TRIM && blank(*p))
            p++;
        char *f = p, *end;
        if (*p == '"') {
            if (quoted(p, f, &end, flags, why))
                return -1;
        } else {
            end = p + strcspn(p, ",");
            char *e = end;
            while (flags & SIM_CSV_TRIM && e > f && blank(e[-1]))
                e--;
            if (*end == '\0' || e < end)
                *e = '\0';
        }
        if (n < max)
            fields[n] = f;
        n++;
        if (*end != ',')
            return n;
        *end = '\0';
        p = end + 1;
    }
}
