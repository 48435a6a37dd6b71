/*
 * gp_check.h: reads a gnuplot script as gnuplot does, to check that no text from a database or
 * the command line reached it as code (used by test_plots_hostile and the plot fuzz harness).
 *
 * Outside strings a '#' starts a comment, which a trailing backslash would continue onto the
 * next line; '...' is a string without any substitution ('' is a quote); "..." one with
 * backslash escapes and `command` substitution; @name outside strings is a macro.
 */
#ifndef LLMSIM_TESTS_GP_CHECK_H
#define LLMSIM_TESTS_GP_CHECK_H

#include <string.h>

/* NULL when the script holds a backquote, an @macro or `marker` (may be NULL) only inside
 * single-quoted strings, closes every string on its line and ends no comment in a backslash;
 * else what is wrong, with *line its line. */
static inline const char *gp_check(const char *text, const char *marker, int *line)
{
    enum { CODE, SINGLE, DOUBLE, COMMENT } at = CODE;
    size_t nm = marker ? strlen(marker) : 0;
    *line = 1;
    for (const char *p = text; *p; p++) {
        if (nm && at != SINGLE && at != COMMENT && strncmp(p, marker, nm) == 0)
            return "the marker outside a single-quoted string";
        if (*p == '\n') {
            if (at == SINGLE || at == DOUBLE)
                return "a string not closed on its line";
            if (at == COMMENT && p > text && p[-1] == '\\')
                return "a comment ending in a backslash (it continues)";
            at = CODE;
            ++*line;
            continue;
        }
        switch (at) {
        case CODE:
            if (*p == '#')
                at = COMMENT;
            else if (*p == '\'')
                at = SINGLE;
            else if (*p == '"')
                at = DOUBLE;
            else if (*p == '`' || *p == '@')
                return "a backquote or @ outside a string";
            break;
        case SINGLE:
            if (*p == '\'' && p[1] == '\'')
                p++;
            else if (*p == '\'')
                at = CODE;
            break;
        case DOUBLE:
            if (*p == '\\' && p[1] && p[1] != '\n')
                p++;
            else if (*p == '"')
                at = CODE;
            else if (*p == '`')
                return "a backquote in a double-quoted string";
            break;
        case COMMENT:
            break;
        }
    }
    return NULL;
}

#endif
