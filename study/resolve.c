/*
 * resolve.c: how the names in a scenario become models and GPUs (calibration's catalogs and its
 * config.json reader), the program's identity, and a description of the host.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "study.h"

const char *study_version(void)
{
    return LLMSIM_VERSION;
}

const char *study_shared_data(void)
{
    return LLMSIM_SHARED_DATA;
}

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

const scn_resolver *study_resolver(void)
{
    static const scn_resolver r = {resolve_model, resolve_gpu, NULL};
    return &r;
}

int study_load(const char *path, const char *const *sets, int nsets, scn_scenario *out,
               sim_err *err)
{
    return scn_load(path, sets, nsets, study_resolver(), out, err);
}

int study_load_text(const char *path, const char *text, const char *const *sets, int nsets,
                    scn_scenario *out, sim_err *err)
{
    return scn_load_text(path, text, sets, nsets, study_resolver(), out, err);
}

int study_model(const char *name, eng_model *out, sim_err *err)
{
    char why[sizeof err->msg];
    if (resolve_model(NULL, name, NULL, out, why, sizeof why) != 0)
        return sim_errf(err, "%s", why);
    return 0;
}

const char *study_hardware(char *buf, size_t len)
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
