/*
 * resolve.c: how the names in a scenario become models and GPUs (calibration's catalogs and its
 * config.json reader), the program's identity, and a description of the host.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "llmsim_build_id.h"
#include "scn_data.h"
#include "study.h"

const char *study_version(void)
{
    return LLMSIM_BUILD_VERSION;
}

const char *study_build_commit(void)
{
    return LLMSIM_COMMIT;
}

int study_build_modified(void)
{
    return LLMSIM_MODIFIED;
}

const char *study_cost_model_hash(void)
{
    return LLMSIM_COST_HASH;
}

const char *study_shared_data(void)
{
    return LLMSIM_SHARED_DATA;
}

/* After a failure to read path: names the public data set it belongs to when it is absent from
 * ../shared/data. */
static void add_data_source(const char *path, char *why, size_t len)
{
    const char *data = scn_data_source(path);
    size_t n = strlen(why);
    if (data && access(path, R_OK) != 0 && n < len)
        snprintf(why + n, len - n,
                 "; it is part of %s, read in place from ../shared/data "
                 "(docs/scenarios.md)",
                 data);
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
        if (cal_model_from_config_json(path, out, why, len) == 0)
            return 0;
        add_data_source(path, why, len);
        return -1;
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

/* An acceptance curve: a path (with a '/' or ending in .yaml, relative to the scenario), or a
 * name in the shared data's speculative/ folder; an unknown name lists the folder's. */
static int resolve_curve(void *st, const char *name, const char *base_dir, char *path,
                         size_t pathlen, char *why, size_t len)
{
    size_t n = strlen(name);
    if (strchr(name, '/') || (n > 5 && strcmp(name + n - 5, ".yaml") == 0)) {
        if (name[0] == '/' || !base_dir || !*base_dir)
            snprintf(path, pathlen, "%s", name);
        else
            snprintf(path, pathlen, "%s/%s", base_dir, name);
        return 0;
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/speculative", study_shared_data());
    snprintf(path, pathlen, "%s/%s.yaml", dir, name);
    if (access(path, R_OK) == 0)
        return 0;
    char names[600] = "";
    size_t off = 0;
    DIR *d = opendir(dir);
    struct dirent *ent;
    while (d && (ent = readdir(d))) {
        size_t l = strlen(ent->d_name);
        if (l > 5 && strcmp(ent->d_name + l - 5, ".yaml") == 0 && off < sizeof names)
            off += (size_t)snprintf(names + off, sizeof names - off, "%s%.*s", off ? ", " : "",
                                    (int)(l - 5), ent->d_name);
    }
    if (d)
        closedir(d);
    if (!d) {
        snprintf(why, len, "no acceptance curve '%s': %s is not there", name, dir);
        add_data_source(path, why, len);
    } else
        snprintf(why, len, "unknown acceptance curve '%s'; valid: %s, or a path to a .yaml", name,
                 names);
    return -1;
}

const scn_resolver *study_resolver(void)
{
    static const scn_resolver r = {resolve_model, resolve_gpu, NULL, resolve_curve};
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
