/*
 * cli.h: the llmsim program: its commands, the option parser they share, and its printing
 * helpers (JSON, progress).
 *
 * Each command takes the arguments after its name (argv[0] is the command or subcommand name)
 * and returns the process exit status: 0 on success, 1 on a user error (message on stderr), 2 on
 * bad usage. Every command and subcommand answers --help (exit 0) with each option, what it does
 * and its default.
 */
#ifndef LLMSIM_CLI_H
#define LLMSIM_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "store_run.h"
#include "study.h"
#include "study_capacity.h"
#include "study_sweep.h"

int cmd_run(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_scenario(int argc, char **argv);  /* scenario check FILE */
int cmd_calibrate(int argc, char **argv); /* calibrate ..., calibrate validate ... */
int cmd_profile(int argc, char **argv);   /* profile list|show|import-vidur */
int cmd_sweep(int argc, char **argv);
int cmd_merge(int argc, char **argv); /* merge OUT.db IN.db... */
int cmd_plot(int argc, char **argv);
int cmd_capacity(int argc, char **argv);
int cmd_recommend(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_report(int argc, char **argv);   /* report --run|--sweep|--capacity ID -o FILE.html */
int cmd_validate(int argc, char **argv); /* validate SET, --list, --ops */

/* ---- options ---- */

/* The options several commands share; a command says which it takes (CLI_DB | CLI_SET ...). */
enum {
    CLI_DB = 1 << 0,    /* --db PATH */
    CLI_SET = 1 << 1,   /* --set KEY=VALUE, repeatable */
    CLI_SEED = 1 << 2,  /* --seed N */
    CLI_STORE = 1 << 3, /* --store requests|iterations|summary */
    CLI_JSON = 1 << 4,  /* --json */
    CLI_QUIET = 1 << 5  /* --quiet */
};

/* What the commands that simulate a scenario FILE (run, sweep, capacity, recommend) share in their
 * cli_command: at most one FILE (min_pos 1: FILE required; 0: the quick options may stand in for
 * it), every shared option, and their runs stored at level unless --store says otherwise. */
#define CLI_SIMULATES(min, level)                                                                  \
    .min_pos = (min), .max_pos = 1,                                                                \
    .common = CLI_DB | CLI_SET | CLI_SEED | CLI_STORE | CLI_JSON | CLI_QUIET, .def_level = (level)

typedef struct cli_common {
    const char *db; /* default "llmsim.db" */
    int db_given;   /* 1 when --db was given */
    const char *sets[STUDY_MAX_SETS];
    int nsets;
    uint64_t seed;
    int seed_given;
    store_level level; /* the command's default unless --store is given */
    int json, quiet;
} cli_common;

typedef enum cli_kind {
    CLI_FLAG,   /* int *: set to 1 */
    CLI_STRING, /* const char **: the argument */
    CLI_INT,    /* int *: an integer in [min, max] */
    CLI_INT64,  /* int64_t *: an integer in [min, max] */
    CLI_DOUBLE, /* double *: a number in [min, max] */
    CLI_CALL    /* fn(arg, value): 0, or -1 after printing what is wrong */
} cli_kind;

typedef struct cli_option {
    const char *name; /* "--reps" */
    const char *meta; /* the value's name in help ("R"); NULL for a flag */
    cli_kind kind;
    void *out;
    const char *help;
    const char *def; /* the default as shown in --help; NULL: none shown */
    double min, max; /* numbers: the accepted range */
    int (*fn)(void *arg, const char *value);
    void *arg;
} cli_option;

/* What a command is, for its help and usage lines. */
typedef struct cli_command {
    const char *name;    /* "run", "profile show" */
    const char *args;    /* positional arguments, as in the usage line ("FILE") */
    const char *summary; /* one sentence */
    const char *details; /* more lines after the options (may be NULL) */
    int min_pos, max_pos;
    unsigned common;       /* which shared options it takes */
    const char *def_level; /* the default of --store, when it takes it */
} cli_command;

#define CLI_END                                                                                    \
    {                                                                                              \
        NULL, NULL, 0, NULL, NULL, NULL, 0, 0, NULL, NULL                                          \
    }
/* The output file's two spellings, -o FILE and --output FILE, into *out (const char **): two
 * rows of an option table. help says what the file is; def is its default as --help shows it
 * (NULL: none shown). */
#define CLI_OUTPUT(out, help, def)                                                                 \
    {"-o", "FILE", CLI_STRING, out, help, def, 0, 0, NULL, NULL},                                  \
    {                                                                                              \
        "--output", "FILE", CLI_STRING, out, "the same as -o", NULL, 0, 0, NULL, NULL              \
    }

/* Parses argv[1..argc-1] against cmd's shared options (into c, which gets its defaults first)
 * and opts (terminated by CLI_END; may be NULL); positional arguments go to pos[] (*npos of
 * them, at most cmd->max_pos). Returns CLI_GO to go on, or the exit status to return now: 0
 * after printing help for --help/-h, 2 after naming an unknown option, a missing or bad value,
 * or a wrong number of arguments (and printing the usage line). */
#define CLI_GO (-1)
int cli_parse(const cli_command *cmd, const cli_option *opts, cli_common *c, int argc, char **argv,
              const char **pos, int *npos);
/* Prints cmd's help: usage, summary, every option with what it does and its default. */
void cli_help(const cli_command *cmd, const cli_option *opts, FILE *f);

/* Dispatches to a subcommand by name: argv[1] names it ("list" in `profile list`). Returns the
 * subcommand's status; 0 after the group's help for --help or no argument when help_ok, 2 for an
 * unknown name (which the message names). */
typedef struct cli_sub {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} cli_sub;
int cli_dispatch(const char *group, const cli_sub *subs, int n, int argc, char **argv);

/* The command as typed (prefix, then argv's words, a space between), truncated to buf's len: for a
 * stored profile's source. */
void cli_command_line(const char *prefix, int argc, char **argv, char *buf, size_t len);

/* Prints err as "llmsim[ what]: message" on stderr; returns 1 (a user error). */
int cli_fail(const char *what, const sim_err *err);
/* What a CLI_CALL option's fn returns after calling a parser that returned rc: 0 when rc is 0,
 * else -1 after printing err as cli_fail does. */
int cli_call_status(const char *what, int rc, const sim_err *err);
/* fprintf to stderr unless quiet. */
void cli_note(const cli_common *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- questions without a scenario file (quick.c) ---- */

/* --model, --gpu, --tp, --ep, --dp, --engine, --rate, --isl, --osl, --lengths, --requests. */
typedef struct cli_quick {
    const char *model, *gpu, *engine, *lengths;
    int tp, ep, dp, isl, osl;
    double rate;
    int64_t requests;
    char buf[16][640]; /* the overrides they make */
    int nbuf;
    char shown[512]; /* the options as given ("--model M --gpu G ..."), for headings */
} cli_quick;
#define CLI_QUICK_NOPTS 11

/* Writes the options into opts[n..] (room for CLI_QUICK_NOPTS) bound to q (zeroed by the
 * caller); returns the new count. */
int cli_quick_options(cli_quick *q, cli_option *opts, int n);
/* After cli_parse: turns the options given into --set overrides placed before the user's in
 * c->sets. Without *file, the question needs --model, --gpu and --isl/--osl or --lengths; then
 * *file becomes "(options)" and *text a small scenario the overrides complete (NULL when FILE
 * is given). CLI_GO, or the exit status (2) after a message naming the option at fault (an
 * unknown engine or lengths table with the nearest valid names). */
int cli_quick_apply(const char *cmd, cli_quick *q, cli_common *c, const char **file,
                    const char **text);

/* Parses one --slo argument into cap's SLOs (study_slo_parse) and appends it, comma-separated,
 * to text (len bytes; the SLOs as given, for the store). 0, or -1 after a message naming the
 * command cmd. */
int cli_slo_add(const char *cmd, study_capacity *cap, char *text, size_t len, const char *v);
/* After cli_quick_apply: gives cap the scenario file and c's overrides, seed and store level
 * (cap borrows c's overrides: c must outlive it). */
void cli_capacity_take(study_capacity *cap, const char *file, const cli_common *c);

/* ---- progress ---- */

/* A progress report on stderr: a bar redrawn in place when stderr is a terminal, otherwise a
 * line at every 10% of the work; nothing when quiet. */
typedef struct cli_progress {
    const char *what; /* "points", "shapes" */
    int total, quiet, tty;
    int last_decile;
    double t0, last;
    double delay_s; /* nothing is shown before this much time has passed (0: at once) */
    int shown;      /* something was printed */
} cli_progress;

/* total <= 0: not known; then the count done and the time elapsed are shown (a line every 10 s
 * when not a terminal). */
void cli_progress_start(cli_progress *p, const char *what, int total, int quiet);
void cli_progress_update(cli_progress *p, int done);
/* The last update, when anything was shown (ends the bar's line on a terminal). */
void cli_progress_finish(cli_progress *p, int done);

/* `list keys`: every scenario key from the settings tables, as text, JSON (c->json) or the
 * Markdown of docs/keys.md (list_keys.c). */
void cli_list_keys(const cli_common *c, int markdown);

/* ---- the summary of a run ---- */

void cli_print_summary(FILE *f, const study_result *r);
/* Whether a sweep point's repetitions saturated: "no", "yes" (its one repetition), or "in K of N"
 * (some only: the point's mean mixes saturated and stable runs). Returns buf. */
const char *cli_saturation(const study_cell *cl, char *buf, size_t len);
/* Where a scenario runs, for headings: its GPU, or a disaggregated deployment's pools ("prefill
 * 1 x h200 tp8, decode 2 x b200 tp4 (rdma, after_prefill)"). Returns buf. */
const char *cli_deployment(const scn_scenario *scn, char *buf, size_t len);
/* Prints, on a line of its own, the validated error of the group nearest scn (the shipped
 * validation/errors.csv), or why it is not validated. */
void cli_print_validated(FILE *f, const scn_scenario *scn);
/* The same sentence for a stored scenario's text, into buf ("" when the text does not load). */
const char *cli_validated_of_text(const char *text, char *buf, size_t len);
void cli_print_metrics_json(sim_jsonw *j, const char *key, const study_result *r);
/* The sentence cal_gpu_extrapolated gives for a GPU the scenario prices with the built-in
 * roofline (either pool's, when disaggregated), or NULL: run, capacity and report show it. */
const char *cli_extrapolated(const scn_scenario *scn);
/* The metrics a sweep's table (sweep, report) shows for each point, in its columns' order. */
#define CLI_SWEEP_SHOWN 6
extern const char *const cli_sweep_shown[CLI_SWEEP_SHOWN];
/* What the sweep's table loads: those, then the requests completed and rejected
 * (CLI_SWEEP_COUNTS), then the rejections by reason (rejected_context, _kv, _batch: metrics
 * only runs that rejected some have). */
#define CLI_SWEEP_COUNTS 2
#define CLI_SWEEP_LOADED (CLI_SWEEP_SHOWN + CLI_SWEEP_COUNTS + 3)
extern const char *const cli_sweep_loaded[CLI_SWEEP_LOADED];

#endif
