/*
 * args.c: the option parser every command shares, its help, and subcommand dispatch.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const cli_option common_opts[] = {
    {"--db", "PATH", CLI_STRING, NULL, "the results database", "llmsim.db", 0, 0, NULL, NULL},
    {"--set", "KEY=VALUE", CLI_STRING, NULL,
     "override (or add) a scenario key by its dotted path; repeatable", NULL, 0, 0, NULL, NULL},
    {"--seed", "N", CLI_STRING, NULL, "the run's seed", "the scenario's", 0, 0, NULL, NULL},
    {"--store", "LEVEL", CLI_STRING, NULL,
     "how much of each run is stored: requests (everything), iterations (iterations and the "
     "summary) or summary",
     NULL, 0, 0, NULL, NULL},
    {"--json", NULL, CLI_FLAG, NULL, "print one JSON object instead of the table", NULL, 0, 0, NULL,
     NULL},
    {"--quiet", NULL, CLI_FLAG, NULL, "print nothing on stderr but errors (no notes, no progress)",
     NULL, 0, 0, NULL, NULL},
};
#define NCOMMON (int)(sizeof common_opts / sizeof common_opts[0])

#define HELP_WIDTH 96

/* Writes text from column `col` (where the cursor is) wrapped at HELP_WIDTH, continuation lines
 * indented by `indent`; a newline in text starts a new line. */
static void wrap(FILE *f, const char *text, int col, int indent)
{
    const char *p = text;
    while (*p) {
        if (*p == '\n') {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
            p++;
            continue;
        }
        size_t word = strcspn(p, " \n");
        if (col > indent && col + 1 + (int)word > HELP_WIDTH) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, word, f);
        col += (int)word;
        p += word;
        while (*p == ' ')
            p++;
    }
    fputc('\n', f);
}

static void print_option(FILE *f, const cli_option *o, const char *def)
{
    char head[64], text[1024];
    snprintf(head, sizeof head, "%s%s%s", o->name, o->meta ? " " : "", o->meta ? o->meta : "");
    snprintf(text, sizeof text, "%s%s%s%s", o->help, def ? " (default: " : "", def ? def : "",
             def ? ")" : "");
    fprintf(f, "  %-24s ", head);
    wrap(f, text, 27, 27);
}

void cli_help(const cli_command *cmd, const cli_option *opts, FILE *f)
{
    fprintf(f, "usage: llmsim %s%s%s [options]\n\n", cmd->name, cmd->args ? " " : "",
            cmd->args ? cmd->args : "");
    wrap(f, cmd->summary, 0, 0);
    fprintf(f, "\noptions:\n");
    for (int i = 0; i < NCOMMON; i++)
        if (cmd->common & (1u << i))
            print_option(f, &common_opts[i],
                         (1u << i) == CLI_STORE ? cmd->def_level : common_opts[i].def);
    for (const cli_option *o = opts; o && o->name; o++)
        print_option(f, o, o->def);
    fprintf(f, "  %-24s %s\n", "-h, --help", "show this help and exit");
    if (cmd->details) {
        fputc('\n', f);
        wrap(f, cmd->details, 0, 0);
    }
}

static int usage_error(const cli_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int usage_error(const cli_command *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "llmsim %s: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: llmsim %s%s%s [options]   (llmsim %s --help lists them)\n", cmd->name,
            cmd->args ? " " : "", cmd->args ? cmd->args : "", cmd->name);
    return 2;
}

/* "--name" or "--name=value" at argv[*i]: 1 when it matches (value set, *i advanced past a
 * separate value), 0 when not, -1 when the value is missing. */
static int match(const cli_option *o, int argc, char **argv, int *i, const char **value)
{
    const char *a = argv[*i];
    size_t n = strlen(o->name);
    if (strncmp(a, o->name, n) != 0 || (a[n] != '\0' && a[n] != '='))
        return 0;
    *value = NULL;
    if (!o->meta)
        return a[n] == '\0' ? 1 : -1;
    if (a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (*i + 1 >= argc)
        return -1;
    *value = argv[++*i];
    return 1;
}

static int parse_number(const cli_option *o, const char *v, double *x)
{
    char *end;
    errno = 0;
    if (o->kind == CLI_DOUBLE)
        *x = strtod(v, &end);
    else
        *x = (double)strtoll(v, &end, 10);
    if (errno || end == v || *end || *x < o->min || *x > o->max)
        return -1;
    return 0;
}

/* Stores an option's value; 0, or the exit status after a message. */
static int take(const cli_command *cmd, const cli_option *o, const char *v)
{
    double x;
    switch (o->kind) {
    case CLI_FLAG:
        *(int *)o->out = 1;
        return 0;
    case CLI_STRING:
        *(const char **)o->out = v;
        return 0;
    case CLI_CALL:
        return o->fn(o->arg, v) == 0 ? 0 : 2;
    case CLI_INT:
    case CLI_INT64:
    case CLI_DOUBLE:
        break; /* a number, below */
    default:
        SIM_CHECK(NULL, !"an option kind take() does not know");
    }
    if (parse_number(o, v, &x) != 0)
        return usage_error(cmd, "%s expects %s in [%g, %g], got '%s'", o->name,
                           o->kind == CLI_DOUBLE ? "a number" : "an integer", o->min, o->max, v);
    if (o->kind == CLI_INT)
        *(int *)o->out = (int)x;
    else if (o->kind == CLI_INT64)
        *(int64_t *)o->out = (int64_t)x;
    else
        *(double *)o->out = x;
    return 0;
}

static int take_common(const cli_command *cmd, int which, const char *v, cli_common *c)
{
    char *end;
    switch (which) {
    case CLI_DB:
        c->db = v;
        c->db_given = 1;
        return 0;
    case CLI_SET:
        if (c->nsets == STUDY_MAX_SETS)
            return usage_error(cmd, "at most %d --set overrides", STUDY_MAX_SETS);
        c->sets[c->nsets++] = v;
        return 0;
    case CLI_SEED:
        errno = 0;
        c->seed = strtoull(v, &end, 10);
        if (errno || end == v || *end || v[0] == '-')
            return usage_error(cmd, "--seed expects a non-negative integer, got '%s'", v);
        c->seed_given = 1;
        return 0;
    case CLI_STORE:
        if (store_level_parse(v, &c->level) != 0)
            return usage_error(cmd, "--store expects requests, iterations or summary, got '%s'", v);
        return 0;
    case CLI_JSON:
        c->json = 1;
        return 0;
    case CLI_QUIET:
        c->quiet = 1;
        return 0;
    default:
        SIM_CHECK(NULL, !"a shared option take_common() does not know");
        return 2;
    }
}

/* Tries argv[*i] against the shared options, then the command's: 1 when taken, 0 when it is
 * none of them, -1 with *status set after a message about its value. */
static int take_option(const cli_command *cmd, const cli_option *opts, cli_common *c, int argc,
                       char **argv, int *i, int *status)
{
    const char *v;
    for (int k = 0; k < NCOMMON; k++) {
        if (!(cmd->common & (1u << k)))
            continue;
        int m = match(&common_opts[k], argc, argv, i, &v);
        if (m < 0)
            *status = usage_error(cmd, "%s needs a value", common_opts[k].name);
        else if (m > 0)
            *status = take_common(cmd, 1 << k, v, c);
        if (m != 0)
            return *status ? -1 : 1;
    }
    for (const cli_option *o = opts; o && o->name; o++) {
        int m = match(o, argc, argv, i, &v);
        if (m < 0)
            *status = usage_error(cmd, o->meta ? "%s needs a value" : "%s takes no value", o->name);
        else if (m > 0)
            *status = take(cmd, o, v);
        if (m != 0)
            return *status ? -1 : 1;
    }
    return 0;
}

study_run_settings cli_run_settings(const cli_common *c, const char *file)
{
    return (study_run_settings){.file = file,
                                .sets = c->sets,
                                .nsets = c->nsets,
                                .seed = c->seed,
                                .seed_given = c->seed_given,
                                .level = c->level};
}

int cli_parse(const cli_command *cmd, const cli_option *opts, cli_common *c, int argc, char **argv,
              const char **pos, int *npos)
{
    static const cli_common blank;
    *c = blank;
    c->db = "llmsim.db";
    c->level = STORE_REQUESTS;
    if (cmd->def_level)
        store_level_parse(cmd->def_level, &c->level);
    *npos = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            cli_help(cmd, opts, stdout);
            return 0;
        }
        int status = 0, t = take_option(cmd, opts, c, argc, argv, &i, &status);
        if (t < 0)
            return status;
        if (t > 0)
            continue;
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return usage_error(cmd, "unknown option '%s'", argv[i]);
        if (*npos == cmd->max_pos)
            return usage_error(cmd, "unexpected argument '%s'", argv[i]);
        pos[(*npos)++] = argv[i];
    }
    if (*npos < cmd->min_pos)
        return usage_error(cmd, "missing %s", cmd->args ? cmd->args : "arguments");
    return CLI_GO;
}

int cli_dispatch(const char *group, const cli_sub *subs, int n, int argc, char **argv)
{
    int help = argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"));
    if (argc >= 2 && !help)
        for (int i = 0; i < n; i++)
            if (strcmp(argv[1], subs[i].name) == 0)
                return subs[i].fn(argc - 1, argv + 1);
    FILE *f = help ? stdout : stderr;
    if (argc >= 2 && !help)
        fprintf(f, "llmsim %s: unknown subcommand '%s'\n", group, argv[1]);
    fprintf(f, "usage: llmsim %s SUBCOMMAND [options]   (llmsim %s SUBCOMMAND --help)\n\n", group,
            group);
    for (int i = 0; i < n; i++)
        fprintf(f, "  %-14s %s\n", subs[i].name, subs[i].summary);
    return help ? 0 : 2;
}

void cli_command_line(const char *prefix, int argc, char **argv, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "%s", prefix);
    for (int i = 0; i < argc && used + 1 < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", used ? " " : "", argv[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

int cli_fail(const char *what, const sim_err *err)
{
    fprintf(stderr, "llmsim%s%s: %s\n", what ? " " : "", what ? what : "", err->msg);
    return 1;
}

int cli_call_status(const char *what, int rc, const sim_err *err)
{
    return rc == 0 ? 0 : -cli_fail(what, err);
}

void cli_note(const cli_common *c, const char *fmt, ...)
{
    if (c && c->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}
