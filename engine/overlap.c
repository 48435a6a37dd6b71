/*
 * overlap.c: arrivals as an overlap loop sees them. An engine whose CPU work overlaps the GPU's
 * (cpu_overhead.async) forms step n+1 while step n runs, right after it has read step n-1's
 * tokens and sent them to the clients:
 *   TensorRT-LLM (tensorrt_llm/_torch/pyexecutor/py_executor.py, _executor_loop_overlap):
 *     _fetch_new_requests, _schedule, _forward_step (launched), then _process_previous_batch,
 *     which waits for the previous step's sampling and runs _handle_responses;
 *   SGLang (python/sglang/srt/managers/scheduler.py, event_loop_overlap): recv_requests,
 *     get_next_batch_to_run, run_batch (launched), then process_batch_result of the last batch;
 *   vLLM with async scheduling (vllm/v1/engine/core.py, step_with_batch_queue, a queue of two):
 *     schedule and execute_model(non_block=True), then the oldest batch's future.result() and
 *     update_from_output; the busy loop reads its input queue before the next call.
 * So the batch that runs after step n was formed when step n began, and a request that arrives
 * while step n runs (a closed-loop client's next request among them: it leaves only once the
 * loop has sent the last token and moved on to forming the next step) reaches the scheduler at
 * the next formation, for the step after. In llmsim each step is formed when the previous one
 * ends; a request arriving after the step in flight was formed is held here until then. With
 * nothing in flight the loops block on their input queue and take a request at once.
 */
#include "engine_int.h"

int eng_overlap_hold(eng_replica *r, eng_request *rq)
{
    if (!r->pool->cfg.cpu.async || !r->busy)
        return 0;
    rq->pool_next = NULL;
    if (r->held_tail)
        r->held_tail->pool_next = rq;
    else
        r->held_head = rq;
    r->held_tail = rq;
    return 1;
}

int32_t eng_overlap_release(eng_replica *r, int64_t before, int64_t now)
{
    int32_t n = 0;
    eng_request *rq;
    /* MODEL: the arrival that caused the formation's own wake (a closed loop's next request at
     * the instant its last token was sent) is not before it: the loop forms the next step as
     * soon as it has sent the tokens, before the client's request can come back */
    while ((rq = r->held_head) && (before < 0 || rq->t_arrival < before)) {
        r->held_head = rq->pool_next;
        if (!r->held_head)
            r->held_tail = NULL;
        rq->pool_next = NULL;
        r->ops->on_arrival(r->st, r, rq, now);
        n++;
    }
    return n;
}
