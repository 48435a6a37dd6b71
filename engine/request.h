/*
 * request.h: one inference request and its lifecycle.
 *
 * Lifecycle: WAITING (arrived, not running) -> RUNNING (prefilling, then decoding) -> FINISHED;
 * a preempted request goes back to WAITING (recompute) or SWAPPED; a request that can never fit
 * is REJECTED with a reason. Disaggregated: PREFILL on a prefill replica -> TRANSFER (its KV on
 * its way to a decode replica) -> DECODE there. The engine owns requests (a pool, reused after
 * they are recorded); schedulers link them into their own queues through the sched_* fields.
 */
#ifndef ENG_REQUEST_H
#define ENG_REQUEST_H

#include <stdint.h>

typedef enum eng_rq_status {
    ENG_RQ_WAITING = 0,
    ENG_RQ_PREFILL, /* admitted; prefill (or recompute) in progress */
    ENG_RQ_DECODE,  /* in the decode cohort: emits one token per decode step */
    ENG_RQ_SWAPPED, /* preempted, KV on the host */
    ENG_RQ_FINISHED,
    ENG_RQ_REJECTED,
    ENG_RQ_TRANSFER, /* disaggregated: prefilled; its KV waits for, or crosses, the link to a
                        decode replica, or has arrived there and joins at its next step */
    ENG_RQ_STATUS_COUNT
} eng_rq_status;

typedef enum eng_reject_reason {
    ENG_REJECT_NONE = 0,
    ENG_REJECT_CONTEXT, /* prompt + output beyond the model's context (or max_model_len) */
    ENG_REJECT_KV,      /* prompt + output can never fit in the KV cache */
    ENG_REJECT_BATCH,   /* prompt larger than the scheduler's per-iteration token limit */
    ENG_REJECT_SHED,    /* shed at the router: every ready replica saturated (admission) */
    ENG_REJECT_FAULT,   /* lost: its replica crashed and it was not retried (faults) */
    ENG_REJECT_REASON_COUNT
} eng_reject_reason;

/* `len` tokens of the content named `id`: token i of it is (id, i). A prompt made of the same
 * segments as another's starts with the same tokens, which is what prefix caching matches
 * (Mooncake's hash_ids, a shared system prompt, a session's earlier turns). */
typedef struct eng_segment {
    uint64_t id;
    int32_t len;
} eng_segment;

typedef struct eng_pcreq eng_pcreq;

const char *eng_rq_status_name(eng_rq_status s);
const char *eng_reject_reason_name(eng_reject_reason r);

typedef struct eng_request eng_request;
struct eng_request {
    int64_t id;      /* arrival order, from 0 */
    int32_t prompt;  /* prompt tokens */
    int32_t output;  /* output tokens to generate (>= 1) */
    int32_t replica; /* replica serving it */
    eng_rq_status status;
    eng_reject_reason reject;

    int64_t t_arrival;     /* ns */
    int64_t t_first_sched; /* ns, first admission; -1 until then */
    int64_t t_last_sched;  /* ns, latest admission (after a preemption, the resume) */
    int64_t t_span_decode; /* ns, when the current span's prefill ended (a swap-in: its
                              resume); -1 while it prefills */
    int64_t t_first_token; /* ns; -1 until then */
    int64_t t_last_token;  /* ns; time of the latest token */
    int64_t t_finish;      /* ns; -1 until then */
    int32_t preemptions;
    int32_t scheduled; /* admissions, counting resumes after preemption */
    int32_t attempts;  /* times routed to a replica: 1, more after a crash's retries; 0 before */

    /* progress */
    int32_t generated;      /* output tokens produced (valid when not in the cohort) */
    int32_t prefill_target; /* tokens the current prefill must compute: prompt, or prompt
                               + generated after a recompute preemption */
    int32_t prefilled;      /* tokens of prefill_target computed so far */
    int32_t kv_blocks;      /* KV blocks held */
    int32_t kv_reserved;    /* 1: blocks reserved up front for prompt + output */
    int32_t padded_prompt;  /* tokens charged for the prefill (static batching pads) */
    int32_t first_unseen;   /* async: first token produced, not yet delivered */

    /* decode cohort (engine) */
    int64_t c_t0;      /* its class's token count t when it joined */
    int32_t c_gen0;    /* generated when it joined */
    int32_t c_fin_idx; /* index in its class's finish heap, -1 when absent */
    int32_t c_new;     /* 1 until its first decode step (individual ITL sample) */
    int32_t c_class;   /* acceptance class (speculative decoding), drawn at arrival */
    int64_t c_fin_t;   /* finish heap key: the class's t when its output is complete */
    int64_t c_ev_t;    /* event heap key: t at its next cap or chunk boundary */
    int32_t c_ev_idx;  /* index in its class's event heap, -1 when absent */

    /* scheduler-owned links and keys */
    eng_request *sched_prev, *sched_next;
    int64_t sched_key;
    int32_t sched_flag;
    int32_t sched_idx; /* its index in a policy's heap (rqheap.h) */

    /* workload class (workload.classes), drawn at arrival: its index and the priority its
     * client sends (0 and 0 without classes) */
    int32_t wclass;
    int32_t priority;

    /* content and prefix caching */
    eng_pcreq *pc;         /* engine-owned: content, block hashes, cached-block table */
    uint64_t tag;          /* the workload source's tag (a session's turn), handed back to it */
    uint64_t session;      /* its conversation's id, from 1 (eng_arrival.session); 0: none */
    int32_t cached_tokens; /* prompt tokens found in the prefix cache at its first admission */
    /* KV offload (offload.c): where it is (ENG_OFF_*); the first block it loads from the tiers
     * and how many; its leading blocks pinned in the GPU cache until it is admitted */
    int32_t off_state;
    int32_t off_first, off_blocks, off_pinned;
    int64_t off_ready; /* ns: its onboarded KV is in (loads within the admitting step) */

    /* engine bookkeeping */
    eng_request *pool_next; /* free list; a decode replica's queue of transfers (pd.c) */
    int64_t xfer_bytes;     /* swap: bytes on the host */

    /* disaggregated prefill/decode (pd.c) */
    int32_t pd_output;        /* output tokens asked for (output is 1 in the prefill pool) */
    int32_t pd_src, pd_dst;   /* prefill and decode replicas; -1 until chosen */
    int32_t pd_blocks;        /* KV blocks reserved on pd_dst while its KV is on its way */
    int64_t t_prefilled;      /* ns: its prefill ended in the prefill pool; -1 before */
    int64_t t_reserved;       /* ns: decode-side KV reserved, the transfer may go; -1 before */
    int64_t pd_epoch;         /* its decode replica's failed admissions when it queued there */
    struct eng_flow *pd_flow; /* its transfer on the link (link.c), NULL when none */
};

#endif
