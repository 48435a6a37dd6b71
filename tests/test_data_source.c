/*
 * test_data_source.c: scenarios that read public data from ../shared/data say which data set
 * they need and where it comes from, in their header comment and in their error when the data is
 * absent (docs/scenarios.md, "Reference data").
 *  - scn_data_source names the data set of each shared folder, and nothing for other paths;
 *  - every shipped scenario whose keys name a file under shared/data, loaded where that folder
 *    is absent, fails with an error naming the data set's origin, and its header names it too.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scn_data.h"
#include "study.h"
#include "test_main.h"

static void test_folders_name_their_data_set(void **state)
{
    (void)state;
    assert_non_null(strstr(scn_data_source("x/../../shared/data/traces/azure-llm-2023/a.csv"),
                           "Azure/AzurePublicDataset"));
    assert_non_null(strstr(scn_data_source("../shared/data/traces/mooncake-fast25/t.jsonl"),
                           "kvcache-ai/Mooncake"));
    assert_non_null(strstr(scn_data_source("/d/shared/data/traces/etalon-processed/s.csv"),
                           "project-etalon/etalon"));
    assert_non_null(strstr(scn_data_source("/d/shared/data/models/m/config.json"), "Hugging Face"));
    assert_non_null(
        strstr(scn_data_source("/d/shared/data/speculative/c.yaml"), "SemiAnalysisAI/InferenceX"));
    assert_null(scn_data_source("traces/azure-llm-2023/a.csv"));
    assert_null(scn_data_source("/data/models/m/config.json"));
    assert_null(scn_data_source(NULL));
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* The leading comment of a scenario's text (its header). */
static void header_of(const char *text, char *out, size_t len)
{
    const char *p = text;
    while (*p == '#')
        p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
    snprintf(out, len, "%.*s", (int)(p - text), text);
}

/* "GitHub OWNER/NAME" or "Hugging Face" from a data set's phrase: what a header must name. */
static void origin_of(const char *data, char *out, size_t len)
{
    const char *g = strstr(data, "GitHub ");
    if (g)
        snprintf(out, len, "%.*s", (int)strcspn(g + 7, ", )"), g + 7);
    else
        snprintf(out, len, "%s", strstr(data, "Hugging Face") ? "Hugging Face" : data);
}

static void test_shipped_scenarios_name_their_data(void **state)
{
    (void)state;
    DIR *d = opendir(LLMSIM_SOURCE_DIR "/scenarios");
    assert_non_null(d);
    struct dirent *e;
    int checked = 0, bad = 0;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".yaml") != 0)
            continue;
        char path[1024], head[8192], origin[256], where[1024];
        snprintf(path, sizeof path, LLMSIM_SOURCE_DIR "/scenarios/%s", e->d_name);
        char *text = read_file(path);
        header_of(text, head, sizeof head);
        const char *body = text + strlen(head);
        if (!strstr(body, "shared/data/"))
            continue;
        /* the same text anchored where ../../shared/data is absent */
        snprintf(where, sizeof where, "/nonexistent-llmsim/scenarios/%s", e->d_name);
        scn_scenario s;
        sim_err err;
        int rc = study_load_text(where, text, NULL, 0, &s, &err);
        if (rc == 0)
            scn_free(&s);
        assert_int_not_equal(rc, 0);
        const char *data = scn_data_source(strstr(err.msg, "shared/data/"));
        assert_non_null(data);
        origin_of(data, origin, sizeof origin);
        print_message("%s: %s\n", e->d_name, err.msg);
        if (!strstr(err.msg, origin) || !strstr(head, origin)) {
            print_message("%s: the error and the header must name %s\n", e->d_name, origin);
            bad++;
        }
        checked++;
    }
    closedir(d);
    assert_int_equal(bad, 0);
    assert_true(checked >= 4);
}

LLMSIM_TEST_MAIN(NULL, NULL, test_folders_name_their_data_set,
                 test_shipped_scenarios_name_their_data)
