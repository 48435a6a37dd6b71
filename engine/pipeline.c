/*
 * pipeline.c: pipeline parallelism. A replica's layers are split over pipeline_parallel stages,
 * each on tensor_parallel x data_parallel_attention GPUs; several batches are in flight through
 * the stages at once, each formed by a scheduler of its own over its own share of the KV cache
 * (vLLM's virtual engines: one Scheduler per pipeline stage, vllm/engine/llm_engine.py, each
 * with num_gpu_blocks // pipeline_parallel_size blocks, vllm/core/scheduler.py; TensorRT-LLM's
 * micro-batches). In llmsim a pipelined replica is `pipeline_batches` replicas (its virtual
 * engines) sharing one pipeline: a batch takes each stage in turn, waiting for the stage to be
 * free of the batch before it, and sends its activations to the next stage over the link
 * between them. With fewer batches in flight than stages, stages idle (bubbles).
 *
 * Cost: a stage's time is the whole model's iteration time (the cost model's, for the stage's
 * tensor-parallel layout) scaled by the largest stage's share of the layers (the slowest stage
 * sets the pace; the embedding and the LM head are not placed on their stages apart). The
 * activations a batch sends are its tokens' hidden states in the activation dtype, each
 * tensor-parallel rank sending the whole tensor to its peer of the next stage (vLLM's
 * send_tensor_dict of IntermediateTensors from every rank).
 *
 * Invariant: a stage's free time never goes back; a batch leaves each stage no earlier than it
 * entered it. O(stages) per iteration, nothing per token.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine_int.h"

/* MODEL: vLLM get_pp_indices (vllm/distributed/utils.py) splits the layers evenly, the
 * remainder one each to the stages before the last: the largest stage has ceil(layers / P) */
int32_t eng_pipe_stage_layers(int32_t layers, int32_t stages)
{
    return stages > 1 ? (layers + stages - 1) / stages : layers;
}

void eng_pipe_plan(const eng_config *c, eng_dtype dt, const eng_layout *l, eng_gpu_share *g,
                   eng_kv_plan *p)
{
    int32_t P = c->pipeline_parallel > 1 ? c->pipeline_parallel : 1, L = c->model.layers;
    p->stage_layers = eng_pipe_stage_layers(L, P);
    if (P == 1 || L <= 0)
        return;
    double share = (double)p->stage_layers / L;
    /* the embedding sits on the first stage, the LM head on the last: the larger of the two
     * stays whole, the layers' weights and KV scale by the largest stage's share */
    double ends[2];
    for (int i = 0; i < 2; i++) {
        uint32_t part = i ? ENG_PART_LM_HEAD : ENG_PART_EMBED;
        ends[i] = (double)eng_model_part_params(&c->model, part) *
                  eng_model_part_bytes(&c->model, dt, part) / l->tp;
    }
    double end = ends[0] > ends[1] ? ends[0] : ends[1];
    double layers = (double)g->weight_bytes - ends[0] - ends[1];
    g->weight_bytes = (int64_t)ceil(layers * share + end);
    g->kv_per_token = (int64_t)ceil((double)g->kv_per_token * share);
    g->window_per_token = (int64_t)ceil((double)g->window_per_token * share);
    g->state_per_seq = (int64_t)ceil((double)g->state_per_seq * share);
}

int32_t eng_pipe_batches(const eng_config *c)
{
    int32_t P = c->pipeline_parallel > 1 ? c->pipeline_parallel : 1;
    return c->pipeline_batches > 0 && c->pipeline_batches < P ? c->pipeline_batches : P;
}

/* MODEL: the stages of a pipeline sit on different nodes when a replica needs more GPUs than a
 * node holds (8), and send over each GPU's NIC; within a node over NVLink */
static double stage_link(const eng_pool *p, int64_t *latency)
{
    const eng_gpu *g = &p->cfg.gpu;
    int across = p->plan.gpus > 8;
    double bw = across ? g->nic_bw : g->link_bw;
    *latency = (int64_t)llround(
        eng_link_default_latency_us(across ? ENG_LINK_RDMA : ENG_LINK_NVLINK) * 1e3);
    return bw > 0 ? bw : g->pcie_bw;
}

int eng_pipe_init(eng_engine *e, eng_pool *p, sim_err *err)
{
    int32_t P = p->cfg.pipeline_parallel > 1 ? p->cfg.pipeline_parallel : 1;
    if (P == 1)
        return 0;
    int32_t V = eng_pipe_batches(&p->cfg), n = p->cfg.replicas;
    double bw = stage_link(p, &(int64_t){0});
    if (bw <= 0)
        return sim_errf(err, "pipeline_parallel: the GPU catalog gives %s no link between stages",
                        p->cfg.gpu.name);
    p->pipes = sim_xcalloc((size_t)n, sizeof *p->pipes);
    for (int32_t i = 0; i < n; i++) {
        eng_pipe *q = &p->pipes[i];
        q->stages = P;
        q->free_at = sim_xcalloc((size_t)P, sizeof *q->free_at);
        q->share = (double)p->plan.stage_layers / p->cfg.model.layers;
        q->act_bytes = (double)p->cfg.model.hidden * eng_dtype_bytes(p->cfg.model.act_dtype);
        q->bw = stage_link(p, &q->latency) / 1e9; /* bytes/ns */
        for (int32_t v = 0; v < V; v++)
            p->reps[i * V + v].pipe = q;
    }
    (void)e;
    return 0;
}

void eng_pipe_fini(eng_pool *p)
{
    for (int32_t i = 0; p->pipes && i < p->cfg.replicas; i++)
        free(p->pipes[i].free_at);
    free(p->pipes);
    p->pipes = NULL;
}

int64_t eng_pipe_place(eng_pipe *q, int64_t start, int64_t gpu, int64_t tokens)
{
    int64_t stage = (int64_t)ceil((double)gpu * q->share);
    int64_t xfer = (int64_t)ceil((double)tokens * q->act_bytes / q->bw) + q->latency;
    int64_t t = start, end = start;
    for (int32_t s = 0; s < q->stages; s++) {
        int64_t b = t > q->free_at[s] ? t : q->free_at[s];
        end = b + stage;
        q->free_at[s] = end;
        t = end + xfer;
    }
    return end;
}
