/*
 * cmd_calibrate.c: `llmsim calibrate`: measure one layer's operators over a grid on a benchmark
 * backend, fit them, report the held-out error and store the profile; and `llmsim calibrate
 * validate`: replay the batch shapes of a stored run on the backend against a profile
 * (study/calibrate.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "study_calibrate.h"

static const cli_command calibrate_cmd = {
    .name = "calibrate",
    .args = "--backend cpu|cuda --model M",
    .summary =
        "Times each operator of one layer (and the LM head) over a grid of shapes on this "
        "machine's "
        "kernels, fits each operator (roofline-shaped least squares or interpolation, chosen by "
        "held-out error), prints the fit report and stores the profile.",
    .details =
        "Use it with `profile: NAME` in a scenario. `llmsim calibrate validate --help` checks a "
        "profile against a stored run's batches. Time CPU profiles on an idle machine.",
    .common = CLI_DB | CLI_QUIET};

static const cli_command validate_cmd = {
    .name = "calibrate validate",
    .args = "--run ID --backend cpu|cuda",
    .summary =
        "Re-executes the batch shapes of a stored run's iterations on the benchmark backend and "
        "reports how far the profile's predicted iteration times are from the measured ones.",
    .common = CLI_DB | CLI_QUIET};

static int take_backend(void *arg, const char *v)
{
    kern_backend *be = arg;
    if (strcmp(v, "cpu") == 0)
        *be = KERN_BACKEND_CPU;
    else if (strcmp(v, "cuda") == 0)
        *be = KERN_BACKEND_CUDA;
    else {
        fprintf(stderr, "llmsim calibrate: --backend is cpu or cuda\n");
        return -1;
    }
    return 0;
}

static int take_grid(void *arg, const char *v)
{
    if (cal_grid_parse(v, arg) == 0)
        return 0;
    fprintf(stderr, "llmsim calibrate: --grid is quick, full or smoke\n");
    return -1;
}

/* Times, fits and stores the profile cal asks for in db, and prints its report. The exit status. */
static int run_calibration(study_calibration *cal, const char *db)
{
    sim_err err = {{0}};
    cal_profile *p = NULL;
    double t0 = sim_wall_seconds();
    store *s = store_open(db, &err);
    if (!s || study_calibrate(cal, s, &p, &err) != 0) {
        store_close(s);
        return cli_fail("calibrate", &err);
    }
    cal_profile_report(p, stdout);
    printf("profile %s saved to %s: %d points, %s, wall time %.1f s\n", p->name, db, p->npts,
           p->device, sim_wall_seconds() - t0);
    cal_profile_free(p);
    store_close(s);
    return 0;
}

static int calibrate(int argc, char **argv)
{
    study_calibration cal;
    memset(&cal, 0, sizeof cal);
    cal.be = (kern_backend)-1;
    int64_t seed = 1;
    const cli_option opts[] = {
        {"--backend", "cpu|cuda", CLI_CALL, NULL, "the kernels to time", NULL, 0, 0, take_backend,
         &cal.be},
        {"--model", "M", CLI_STRING, &cal.model, "a catalog model or a config.json path", NULL, 0,
         0, NULL, NULL},
        {"--grid", "quick|full|smoke", CLI_CALL, NULL,
         "how many shapes (smoke: a few per operator, to check the pipeline in seconds)", "quick",
         0, 0, take_grid, &cal.grid},
        {"--out", "NAME", CLI_STRING, &cal.out, "the profile's name", "<backend>-<model>-<grid>", 0,
         0, NULL, NULL},
        {"--gpu", "G", CLI_STRING, &cal.gpu, "the catalog GPU the profile stands for",
         "from the device (cuda) or cpu", 0, 0, NULL, NULL},
        {"--seed", "N", CLI_INT64, &seed, "the held-out selection", "1", 0, 9e18, NULL, NULL},
        {"--replace", NULL, CLI_FLAG, &cal.replace, "replace a stored profile of the same name",
         NULL, 0, 0, NULL, NULL},
        {"--runs", "N", CLI_INT, &cal.runs,
         "timed calls per shape (a rough, quicker profile with few; the medians need several)",
         "5 to 30, until they add up to 20 ms", 1, 1000, NULL, NULL},
        {"--graph", "N", CLI_INT, &cal.graph_calls,
         "cuda: time N calls captured into one CUDA graph, each point a replay's time / N (as "
         "engines replay decode passes); 0 times each call alone, an eager launch",
         "0", 0, 1000, NULL, NULL},
        CLI_END};
    cli_common c;
    int npos, st = cli_parse(&calibrate_cmd, opts, &c, argc, argv, NULL, &npos);
    if (st != CLI_GO)
        return st;
    if ((int)cal.be < 0 || !cal.model) {
        fprintf(stderr, "llmsim calibrate: give --backend cpu|cuda and --model M\n");
        return 2;
    }
    if (cal.graph_calls > 0 && cal.be != KERN_BACKEND_CUDA) {
        fprintf(stderr,
                "llmsim calibrate: --graph times CUDA graphs: it goes with --backend cuda\n");
        return 2;
    }
    char cmdline[512];
    cli_command_line("llmsim", argc, argv, cmdline, sizeof cmdline);
    cal.backend_name = cal.be == KERN_BACKEND_CUDA ? "cuda" : "cpu";
    cal.seed = (uint64_t)seed;
    cal.command = cmdline;
    cal.progress = c.quiet ? NULL : stderr;
    return run_calibration(&cal, c.db);
}

typedef struct replay_print {
    const cli_common *c;
    const study_replay_spec *r;
    double t0;
} replay_print;

static void replay_row(void *arg, const study_replay_out *o, int i, const eng_shape *sh,
                       double meas, double pred)
{
    replay_print *rp = arg;
    if (i == 0) {
        printf("replaying %d of run %lld's %lld iterations on %s against profile %s (model %s)\n",
               o->n, (long long)rp->r->run, (long long)o->iterations, rp->r->backend_name,
               o->profile, o->model);
        printf("%5s %6s %7s %6s %10s %10s %10s %9s\n", "#", "seqs", "prefill", "decode", "dec.ctx",
               "meas.ms", "pred.ms", "error");
    }
    if (i < 10 || i == o->n - 1)
        printf("%5d %6d %7lld %6d %10lld %10.3f %10.3f %+8.1f%%\n", i, sh->num_seqs,
               (long long)sh->prefill_tokens, sh->decode_seqs, (long long)sh->decode_ctx,
               meas / 1e6, pred / 1e6, (pred - meas) / meas * 100);
    if (!rp->c->quiet)
        fprintf(stderr, "\rvalidate: %d/%d iterations replayed (%.0f s)", i + 1, o->n,
                sim_wall_seconds() - rp->t0);
}

/* Replays r's batches, a row printed as each is timed, and prints the error. The exit status. */
static int run_replay(study_replay_spec *r, const cli_common *c)
{
    replay_print rp = {c, r, sim_wall_seconds()};
    r->row = replay_row;
    r->row_arg = &rp;
    sim_err err = {{0}};
    study_replay_out o;
    store *s = store_open_readonly(c->db, &err);
    int rc = s ? study_replay(r, s, &o, &err) : -1;
    store_close(s);
    if (!c->quiet && rc == 0)
        fprintf(stderr, "\n");
    if (rc != 0)
        return cli_fail("calibrate validate", &err);
    printf("iteration time error over %d iterations: median %.2f%%, p95 %.2f%% "
           "(absolute percentage error of predicted vs measured)\n",
           o.n, o.med_ape, o.p95_ape);
    return 0;
}

static int validate(int argc, char **argv)
{
    study_replay_spec r;
    memset(&r, 0, sizeof r);
    r.be = (kern_backend)-1;
    r.max_iters = 50;
    const cli_option opts[] = {{"--run", "ID", CLI_INT64, &r.run,
                                "the stored run whose batches are replayed", NULL, 1, 9e18, NULL,
                                NULL},
                               {"--backend", "cpu|cuda", CLI_CALL, NULL, "the kernels to time",
                                NULL, 0, 0, take_backend, &r.be},
                               {"--max-iters", "N", CLI_INT, &r.max_iters,
                                "iterations replayed, evenly spaced", "50", 1, 100000, NULL, NULL},
                               {"--profile", "NAME", CLI_STRING, &r.profile, "the profile to check",
                                "the one the run used", 0, 0, NULL, NULL},
                               {"--model", "M", CLI_STRING, &r.model, "the model to replay",
                                "the run's", 0, 0, NULL, NULL},
                               CLI_END};
    cli_common c;
    int npos, st = cli_parse(&validate_cmd, opts, &c, argc, argv, NULL, &npos);
    if (st != CLI_GO)
        return st;
    if (r.run < 1 || (int)r.be < 0) {
        fprintf(stderr, "llmsim calibrate validate: give --run ID and --backend cpu|cuda\n");
        return 2;
    }
    r.backend_name = r.be == KERN_BACKEND_CUDA ? "cuda" : "cpu";
    return run_replay(&r, &c);
}

int cmd_calibrate(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "validate") == 0)
        return validate(argc - 1, argv + 1);
    return calibrate(argc, argv);
}
