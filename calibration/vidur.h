/*
 * vidur.h: import of the per-operator profiling tables Vidur publishes
 * (data/profiling/compute/<gpu>/<org>/<model>/mlp.csv and attention.csv).
 *
 * mlp.csv rows give, per num_tokens and num_tensor_parallel_workers, the min/max/mean/median/std
 * time in milliseconds of each non-attention operator of one layer; attention.csv rows give
 * attn_prefill by (prefill_chunk_size, kv_cache_size) and attn_decode by (batch_size,
 * kv_cache_size); data/profiling/network/<node>/all_reduce.csv and send_recv.csv give the
 * collectives by size in bytes, num_workers and devices_per_node. Medians become profile points
 * (repeated shapes averaged); Vidur's operator names map to llmsim's: emb -> embed, input_layernorm
 * and post_attention_layernorm -> rmsnorm, attn_pre_proj -> qkv_proj, attn_rope -> rope,
 * attn_post_proj -> o_proj, mlp_up_proj -> mlp_up_gate, mlp_act -> mlp_act, mlp_down_proj ->
 * mlp_down, add -> add.
 */
#ifndef CAL_VIDUR_H
#define CAL_VIDUR_H

#include <stddef.h>

#include "model.h"
#include "profile.h"
#include "sim.h"

/* The catalog GPU of a Vidur GPU directory ("a100" -> "a100-80gb", "h100" -> "h100-sxm"), or
 * NULL when the catalog has none. */
const char *cal_vidur_gpu(const char *vidur_gpu);
/* The catalog model of a Vidur model directory ("meta-llama/Meta-Llama-3-8B" or its last part
 * -> "llama-3-8b"), or NULL when the catalog has none. */
const char *cal_vidur_model(const char *vidur_model);

/*
 * Finds compute/<gpu>/<model>/mlp.csv under dir (dir may be Vidur's repository root, its
 * data/profiling, or compute/'s parent; model may omit the organisation) and writes the model
 * directory's path into out. Returns 0, or -1 with err naming the paths tried.
 */
int cal_vidur_find(const char *dir, const char *gpu, const char *model, char *out, size_t len,
                   sim_err *err);

/*
 * Reads model_dir/mlp.csv (and model_dir/attention.csv when present, or attention_csv when not
 * NULL) into p's points: the rows whose num_tensor_parallel_workers is tp and whose shape
 * columns (n_embd, n_head or n_q_head, n_kv_head, n_expanded_embd, vocab_size) match m. With
 * tp > 1 it also reads the network tables beside compute/ (network/<gpu>_dgx or
 * <gpu>_pairwise_nvlink: all_reduce.csv rows of tp GPUs in one node as allreduce points,
 * send_recv.csv rows of 2 GPUs as send_recv points, x = bytes). Sets p->dims = *m and p->tp.
 * Writes what was read into note ("mlp.csv: 1824 rows, ...").
 * Returns 0, or -1 with err naming the file, line and column at fault (a missing column, a
 * model mismatch, no rows for tp).
 */
int cal_vidur_read(const char *model_dir, const char *attention_csv, const eng_model *m, int tp,
                   cal_profile *p, char *note, size_t notelen, sim_err *err);

#endif
