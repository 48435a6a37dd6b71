/*
 * cmd_common.c: shared pieces of the subcommands.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "catalog.h"
#include "cli.h"
#include "cmd_common.h"

static int resolve_model(void *st, const char *name, const char *base_dir, eng_model *out,
                         char *why, size_t len)
{
    if (cal_model_find(name, out) == 0)
        return 0;
    if (strchr(name, '/') || strstr(name, ".json")) {
        char path[1024];
        if (name[0] == '/' || !base_dir || !*base_dir)
            snprintf(path, sizeof path, "%s", name);
        else
            snprintf(path, sizeof path, "%s/%s", base_dir, name);
        return cal_model_from_config_json(path, out, why, len);
    }
    char names[1024];
    snprintf(why, len, "unknown model '%s'; valid: %s, or a path to a config.json", name,
             cal_model_names(names, sizeof names));
    return -1;
}

static int resolve_gpu(void *st, const char *name, eng_gpu *out, char *why, size_t len)
{
    if (cal_gpu_find(name, out) == 0)
        return 0;
    char names[512];
    snprintf(why, len, "unknown GPU '%s'; valid: %s", name, cal_gpu_names(names, sizeof names));
    return -1;
}

const scn_resolver *cmd_resolver(void)
{
    static const scn_resolver r = {resolve_model, resolve_gpu, NULL};
    return &r;
}

const char *cmd_hardware(char *buf, size_t len)
{
    char model[256] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "model name", 10) == 0) {
                char *colon = strchr(line, ':');
                if (colon) {
                    snprintf(model, sizeof model, "%s", colon + 2);
                    model[strcspn(model, "\n")] = '\0';
                }
                break;
            }
        fclose(f);
    }
    snprintf(buf, len, "%s, %ld cores", model, sysconf(_SC_NPROCESSORS_ONLN));
    return buf;
}

static double find(const eng_metric *m, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(m[i].name, name) == 0)
            return m[i].value;
    return NAN;
}

void cmd_print_summary(FILE *f, const eng_metric *m, int n)
{
    fprintf(f, "%-34s %12.0f\n", "Successful requests:", find(m, n, "completed"));
    fprintf(f, "%-34s %12.0f\n", "Rejected requests:", find(m, n, "rejected"));
    fprintf(f, "%-34s %12.2f\n", "Duration (s, simulated):", find(m, n, "duration"));
    fprintf(f, "%-34s %12.0f\n", "Total input tokens:", find(m, n, "total_input_tokens"));
    fprintf(f, "%-34s %12.0f\n", "Total generated tokens:", find(m, n, "total_output_tokens"));
    fprintf(f, "%-34s %12.2f\n", "Request throughput (req/s):", find(m, n, "request_throughput"));
    fprintf(f, "%-34s %12.2f\n",
            "Output token throughput (tok/s):", find(m, n, "output_throughput"));
    fprintf(f, "%-34s %12.2f\n",
            "Total token throughput (tok/s):", find(m, n, "total_token_throughput"));
    fprintf(f, "%-34s %12.2f\n", "Request goodput (req/s):", find(m, n, "request_goodput"));
    static const char *const what[][2] = {
        {"ttft_ms", "TTFT"},       {"tpot_ms", "TPOT"},
        {"itl_ms", "ITL"},         {"e2el_ms", "E2E latency"},
        {"waiting_ms", "Waiting"}, {"sched_overhead_ms", "Sched overhead"}};
    fprintf(f, "%-18s %10s %10s %10s %10s %10s\n", "(ms)", "mean", "median", "p90", "p95", "p99");
    for (size_t i = 0; i < sizeof what / sizeof what[0]; i++) {
        char k[5][48];
        static const char *const pre[5] = {"mean", "median", "p90", "p95", "p99"};
        for (int j = 0; j < 5; j++)
            snprintf(k[j], sizeof k[j], "%s_%s", pre[j], what[i][0]);
        fprintf(f, "%-18s %10.2f %10.2f %10.2f %10.2f %10.2f\n", what[i][1], find(m, n, k[0]),
                find(m, n, k[1]), find(m, n, k[2]), find(m, n, k[3]), find(m, n, k[4]));
    }
}

void cmd_print_json(FILE *f, const eng_metric *m, int n)
{
    fprintf(f, "{");
    for (int i = 0; i < n; i++)
        fprintf(f, "%s\"%s\": %.17g", i ? ", " : "", m[i].name, m[i].value);
    fprintf(f, "}\n");
}

const char *cli_opt(int argc, char **argv, int *i, const char *name)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return NULL;
    if (a[n] == '=')
        return a + n + 1;
    if (a[n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        fprintf(stderr, "llmsim: %s needs a value\n", name);
        exit(2);
    }
    return argv[++*i];
}
