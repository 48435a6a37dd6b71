/*
 * keys.c: the scenario's own settings tables (keys.h): the top level (relative to
 * scn_scenario), which takes in the deployment's keys (engine/config.c), the pools' and the
 * link's (engine/pd.c), speculative decoding's (engine/config.c) and the workload's
 * (workload.c); and the profile, SLO and cost model sections.
 */
#include <math.h>
#include <stddef.h>

#include "scn_int.h"

static const eng_key profile_keys[] = {
    {"name", ENG_KEY_STR, ENG_KEY_REQUIRED, 0, 0, "", NULL, NULL, "the stored profile's name",
     ENG_KEY_AT(scn_scenario, profile)},
    {"borrow_from", ENG_KEY_STR, 0, 0, 0, "", "(the scenario's GPU)", NULL,
     "the GPU the profile was measured on, to price this scenario's GPU with it",
     ENG_KEY_AT(scn_scenario, profile_borrow)},
    ENG_KEY_END};

static const eng_key slo_keys[] = {
    {"ttft_ms", ENG_KEY_NUM, 0, 0, INFINITY, "ms", "0", NULL,
     "time to first token a good request meets (0: none)", ENG_KEY_AT(scn_slo, ttft_ms)},
    {"tpot_ms", ENG_KEY_NUM, 0, 0, INFINITY, "ms", "0", NULL,
     "time per output token a good request meets (0: none)", ENG_KEY_AT(scn_slo, tpot_ms)},
    {"e2e_ms", ENG_KEY_NUM, 0, 0, INFINITY, "ms", "0", NULL,
     "end-to-end latency a good request meets (0: none)", ENG_KEY_AT(scn_slo, e2e_ms)},
    ENG_KEY_END};

static const eng_key cost_keys[] = {
    {"moe_skew", ENG_KEY_NUM, 0, 0, 10, "", "0", NULL, "old name of moe.skew (read as it)",
     ENG_KEY_AT(scn_cost, moe_skew)},
    {"engine", ENG_KEY_ENUM, ENG_KEY_TEXT, 0, 0, "", "(the engine preset's, else vllm)",
     "vllm|sglang|trtllm", "whose kernels price the pass", ENG_KEY_AT(scn_cost, engine)},
    ENG_KEY_END};

#define POOL_ROW(name, doc)                                                                        \
    {                                                                                              \
        name, ENG_KEY_MAP, ENG_KEY_CODE, 0, 0, "", NULL, NULL, doc, ENG_KEY_NOWHERE,               \
            .sub = eng_pool_keys                                                                   \
    }

const eng_key scn_root_keys[] = {
    {"name", ENG_KEY_STR, 0, 0, 0, "", "(the file's name)", NULL, "the scenario's name",
     ENG_KEY_AT(scn_scenario, name)},
    {"description", ENG_KEY_STR, ENG_KEY_CODE, 0, 0, "", NULL, NULL,
     "free text (any YAML), kept with the scenario and not read", ENG_KEY_NOWHERE},
    {"seed", ENG_KEY_INT, ENG_KEY_U64, 0, INFINITY, "", "1", NULL,
     "the random streams' seed: same seed, same results", ENG_KEY_AT(scn_scenario, seed)},
    {"model", ENG_KEY_STR, ENG_KEY_REQUIRED, 0, 0, "", NULL, NULL,
     "a catalog name or a path to a config.json", ENG_KEY_AT(scn_scenario, model_name)},
    {"gpu", ENG_KEY_STR, ENG_KEY_REQUIRED, 0, 0, "", NULL, NULL, "a GPU of the catalog",
     ENG_KEY_AT(scn_scenario, gpu_name)},
    {"dtype", ENG_KEY_ENUM, ENG_KEY_CODE, 0, 0, "", "(the checkpoint's)",
     "bf16|fp16|fp8|nvfp4|mxfp4|int4|mxfp4-fp8|fp4", "the weights as served (fp4: nvfp4)",
     ENG_KEY_NOWHERE},
    {"kv_dtype", ENG_KEY_ENUM, ENG_KEY_CODE, 0, 0, "", "auto", "auto|bf16|fp16|fp8",
     "the KV cache (auto: the checkpoint's KV dtype, else its activations')", ENG_KEY_NOWHERE},
    {"profile", ENG_KEY_MAP, ENG_KEY_SCALAR | ENG_KEY_CODE, 0, 0, "", "(the built-in roofline)",
     NULL, "a stored profile: NAME or {name, borrow_from}", ENG_KEY_NOWHERE, .sub = profile_keys},
    {"", ENG_KEY_INCLUDE, 0, 0, 0, "", NULL, NULL, "", ENG_KEY_AT(scn_scenario, engine),
     .sub = eng_deploy_keys},
    POOL_ROW("prefill", "the prefill pool of a disaggregated deployment"),
    POOL_ROW("decode", "the decode pool of a disaggregated deployment"),
    {"kv_transfer", ENG_KEY_MAP, ENG_KEY_CODE, 0, 0, "", NULL, NULL,
     "the link the KV crosses from prefill to decode", ENG_KEY_NOWHERE,
     .sub = eng_kv_transfer_keys},
    {"kv_offload", ENG_KEY_MAP, ENG_KEY_CODE, 0, 0, "", "(none)", NULL,
     "KV offload tiers behind each replica's GPU cache: {tiers: [{kind, capacity_gb, "
     "bandwidth_gb_s}], policy}",
     ENG_KEY_NOWHERE, .sub = eng_offload_keys},
    {"slo", ENG_KEY_MAP, 0, 0, 0, "", NULL, NULL, "the goodput's service-level objectives",
     ENG_KEY_AT(scn_scenario, slo), .sub = slo_keys},
    {"speculative", ENG_KEY_MAP, ENG_KEY_CODE, 0, 0, "", NULL, NULL, "speculative decoding",
     ENG_KEY_NOWHERE, .sub = eng_spec_keys},
    {"cost_model", ENG_KEY_MAP, 0, 0, 0, "", NULL, NULL,
     "inputs of the cost model beyond the model, GPU and layout", ENG_KEY_AT(scn_scenario, cost),
     .sub = cost_keys},
    {"price", ENG_KEY_MAP, 0, 0, 0, "", NULL, NULL,
     "the list price of the deployment's GPUs, over the GPU catalog's",
     ENG_KEY_AT(scn_scenario, engine.fleet), .sub = eng_price_keys},
    {"power", ENG_KEY_MAP, 0, 0, 0, "", NULL, NULL,
     "the power model of the deployment's GPUs, over the GPU catalog's",
     ENG_KEY_AT(scn_scenario, engine.fleet), .sub = eng_power_keys},
    {"admission", ENG_KEY_MAP, 0, 0, 0, "", NULL, NULL,
     "load shedding at the router when every ready replica is saturated (rejections)",
     ENG_KEY_AT(scn_scenario, engine.fleet), .sub = eng_admission_keys},
    {"autoscale", ENG_KEY_MAP, 0, 0, 0, "", NULL, NULL,
     "replicas that follow the load (Kubernetes HPA), each new one after a cold start",
     ENG_KEY_AT(scn_scenario, engine.fleet.autoscale), .sub = eng_autoscale_keys},
    {"faults", ENG_KEY_MAP, ENG_KEY_LIST | ENG_KEY_CODE, 0, 0, "", "(none)", NULL,
     "faults injected into replicas: a list of {at_s, replica, kind: crash|slow, duration_s, "
     "factor}",
     ENG_KEY_NOWHERE, .sub = eng_fault_keys},
    {"fault_retries", ENG_KEY_MAP, 0, 0, 0, "", NULL, NULL,
     "whether a crashed replica's requests are retried on another, or lost",
     ENG_KEY_AT(scn_scenario, engine.fleet.faults), .sub = eng_fault_retry_keys},
    {"workload", ENG_KEY_MAP, ENG_KEY_CODE, 0, 0, "", NULL, NULL,
     "the requests: how many, when they arrive, how long (required)", ENG_KEY_NOWHERE,
     .sub = scn_workload_keys},
    ENG_KEY_END};

const eng_key *scn_keys(void)
{
    return scn_root_keys;
}
