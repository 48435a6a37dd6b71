/*
 * fuzz_scenario.c: libFuzzer harness for the scenario loader with overrides, and the workload
 * source built from what it accepts.
 *
 * Input: the scenario's YAML text, then, after a NUL byte, up to 8 `--set` overrides separated
 * by NUL bytes. A scenario that loads gets a source from which up to 256 arrivals are drawn
 * (a closed loop's clients and sessions' turns are released as if each request finished at
 * once, in arrival order, every third one rejected). Models and GPUs
 * come from the tests' fake resolver, so nothing outside the input is read unless the input
 * names a file.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"
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
    eng_request rq[256]; /* the arrivals drawn, handed back oldest first */
    int64_t now = 0;
    int n = 0, done = 0;
    for (int i = 0; i < 256; i++) {
        a.t = -1;
        int rc = ops->next(src, now, &a, &err);
        if (rc == ENG_SRC_LATER && a.t > now) { /* a timed wait: time moves on to it */
            now = a.t;
        } else if (rc == ENG_SRC_OK) {
            now = a.t;
            memset(&rq[n], 0, sizeof rq[n]);
            rq[n].id = n;
            rq[n].prompt = a.prompt;
            rq[n].output = a.output;
            rq[n].t_arrival = a.t;
            rq[n].tag = a.tag;
            rq[n].status = n % 3 == 2 ? ENG_RQ_REJECTED : ENG_RQ_FINISHED;
            n++;
        } else if (!(rc == ENG_SRC_LATER && ops->on_done && done < n)) {
            break; /* the end, an error, or a closed loop waiting on nothing in flight */
        }
        if (ops->on_done && done < n && (rc == ENG_SRC_LATER || i % 3 == 0))
            ops->on_done(src, now, &rq[done++]);
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
