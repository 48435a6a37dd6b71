/*
 * resolve.c: how the names in a scenario become models and GPUs (calibration's catalogs and its
 * config.json reader), the program's identity, and a description of the host.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alias.h"
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

/* name, relative to base_dir unless absolute (or without a base_dir), into buf. */
static void join_path(const char *name, const char *base_dir, char *buf, size_t len)
{
    if (name[0] == '/' || !base_dir || !*base_dir)
        snprintf(buf, len, "%s", name);
    else
        snprintf(buf, len, "%s/%s", base_dir, name);
}

/* path (relative to base_dir unless absolute) into buf; a folder means its config.json.
 * 1 when that file exists. */
static int config_path(const char *name, const char *base_dir, char *buf, size_t len)
{
    struct stat st;
    join_path(name, base_dir, buf, len);
    if (stat(buf, &st) != 0)
        return 0;
    if (S_ISDIR(st.st_mode)) {
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, "%sconfig.json", n && buf[n - 1] == '/' ? "" : "/");
        return access(buf, R_OK) == 0;
    }
    return 1;
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

/* A model named by a path (or a Hugging Face id) with no config.json at path: why, with the
 * nearest catalog names and the data set the path belongs to. -1. */
static int no_config(const char *name, const char *path, const char *near, char *why, size_t len)
{
    snprintf(why, len,
             "unknown model '%s': no config.json at %s, and not the Hugging Face id of a "
             "catalog model%s%s (llmsim list models)",
             name, path, near[0] ? "; nearest: " : "", near);
    add_data_source(path, why, len);
    return -1;
}

/* A model: a catalog name, a config.json (or a folder holding one), a Hugging Face id of a
 * catalog model; else an error with the nearest catalog names. */
static int resolve_model(void *st, const char *name, const char *base_dir, eng_model *out,
                         char *why, size_t len)
{
    char path[1024], alias[64], near[256], names[1024];
    (void)st;
    if (cal_model_find(name, out) == 0)
        return 0;
    if (config_path(name, base_dir, path, sizeof path))
        return cal_model_from_config_json(path, out, why, len);
    if (cal_model_alias(name, alias, sizeof alias) == 0 && cal_model_find(alias, out) == 0)
        return 0;
    cal_model_nearest(name, near, sizeof near);
    if (strchr(name, '/') || strstr(name, ".json"))
        return no_config(name, path, near, why, len);
    if (near[0])
        snprintf(why, len, "unknown model '%s'; nearest: %s (all: llmsim list models)", name, near);
    else
        snprintf(why, len, "unknown model '%s'; valid: %s, or a path to a config.json", name,
                 cal_model_names(names, sizeof names));
    return -1;
}

/* A GPU: a catalog name or a usual spelling of one; else an error with the nearest. */
static int resolve_gpu(void *st, const char *name, eng_gpu *out, char *why, size_t len)
{
    char names[512], near[256], alias[64];
    (void)st;
    if (cal_gpu_find(name, out) == 0 ||
        (cal_gpu_alias(name, alias, sizeof alias) == 0 && cal_gpu_find(alias, out) == 0))
        return 0;
    cal_gpu_nearest(name, near, sizeof near);
    if (near[0])
        snprintf(why, len, "unknown GPU '%s'; nearest: %s (all: %s)", name, near,
                 cal_gpu_names(names, sizeof names));
    else
        snprintf(why, len, "unknown GPU '%s'; valid: %s", name, cal_gpu_names(names, sizeof names));
    return -1;
}

/* The curves in folder dir (its .yaml files, without the extension) as "a, b" into names;
 * -1 when dir cannot be opened. */
static int curve_names(const char *dir, char *names, size_t len)
{
    size_t off = 0;
    DIR *d = opendir(dir);
    struct dirent *ent;
    names[0] = '\0';
    if (!d)
        return -1;
    while ((ent = readdir(d))) {
        size_t l = strlen(ent->d_name);
        if (l > 5 && strcmp(ent->d_name + l - 5, ".yaml") == 0 && off < len)
            off += (size_t)snprintf(names + off, len - off, "%s%.*s", off ? ", " : "", (int)(l - 5),
                                    ent->d_name);
    }
    closedir(d);
    return 0;
}

/* An acceptance curve: a path (with a '/' or ending in .yaml, relative to the scenario), or a
 * name in the shared data's speculative/ folder; an unknown name lists the folder's. */
static int resolve_curve(void *st, const char *name, const char *base_dir, char *path,
                         size_t pathlen, char *why, size_t len)
{
    size_t n = strlen(name);
    if (strchr(name, '/') || (n > 5 && strcmp(name + n - 5, ".yaml") == 0)) {
        join_path(name, base_dir, path, pathlen);
        return 0;
    }
    char dir[1024], names[600];
    snprintf(dir, sizeof dir, "%s/speculative", study_shared_data());
    snprintf(path, pathlen, "%s/%s.yaml", dir, name);
    if (access(path, R_OK) == 0)
        return 0;
    if (curve_names(dir, names, sizeof names) != 0) {
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

/* The CPU's model name from /proc/cpuinfo into model (left as it is when there is none). */
static void cpu_model(char *model, size_t len)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            char *colon = strchr(line, ':');
            if (colon) {
                snprintf(model, len, "%s", colon + 2);
                model[strcspn(model, "\n")] = '\0';
            }
            break;
        }
    fclose(f);
}

const char *study_hardware(char *buf, size_t len)
{
    char model[256] = "unknown CPU";
    cpu_model(model, sizeof model);
    snprintf(buf, len, "%s, %ld cores", model, sysconf(_SC_NPROCESSORS_ONLN));
    return buf;
}
