/*
 * fuzz_scenario.c: libFuzzer harness for the scenario loader with overrides, and the workload
 * source built from what it accepts.
 *
 * Input: the scenario's YAML text, then, after a NUL byte, up to 8 `--set` overrides separated
 * by NUL bytes. A scenario that loads gets a source from which up to 256 arrivals are drawn
 * (a closed loop's clients are released as if each request finished at once). Models and GPUs
 * come from the tests' fake resolver, so nothing outside the input is read unless the input
 * names a file.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

extern const scn_resolver test_resolver;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void drain(const scn_scenario *s)
{
    sim_err err = {{0}};
    scn_source *src = scn_source_new(s, 1, &err);
    if (!src)
        return;
    const eng_source_ops *ops = scn_source_ops();
    eng_arrival a;
    int64_t now = 0;
    for (int i = 0; i < 256; i++) {
        int rc = ops->next(src, now, &a, &err);
        if (rc == ENG_SRC_OK)
            now = a.t;
        else if (rc == ENG_SRC_LATER && ops->on_done)
            ops->on_done(src, now);
        else
            break;
        if (ops->on_done && i % 3 == 0)
            ops->on_done(src, now);
    }
    scn_source_free(src);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = '\0';
    const char *sets[8];
    int nsets = 0;
    for (char *p = buf + strlen(buf) + 1; p < buf + size && nsets < 8; p += strlen(p) + 1)
        sets[nsets++] = p;
    scn_scenario s;
    sim_err err = {{0}};
    if (scn_load_text("fuzz/scenario.yaml", buf, sets, nsets, &test_resolver, &s, &err) == 0)
        drain(&s);
    scn_free(&s);
    free(buf);
    return 0;
}
