/*
 * test_calibration_vidur.c: the Vidur import against hostile numbers (found by fuzz and fault
 * tests): 1e20, inf and nan in numeric columns were converted to int unchecked (undefined
 * behaviour), a fractional or huge token count became a point the cost model cannot use, an
 * empty mlp.csv leaked the line buffer (LeakSanitizer in Debug builds reports it), and rows
 * without a usable time sorted an empty, NULL list (found by fuzz_vidur).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"

#include "profile.h"
#include "vidur.h"

#include "models_util.h"
#include "test_main.h"

static char dir[128];
static const char MLP_HEAD[] = "time_stats.add.median,n_head,n_kv_head,n_embd,n_expanded_embd,"
                               "vocab_size,num_tokens,num_tensor_parallel_workers\n";
static const char ATTN_HEAD[] = "n_embd,n_q_head,n_kv_head,num_tensor_parallel_workers,batch_size,"
                                "prefill_chunk_size,kv_cache_size,is_prefill,"
                                "time_stats.attn_prefill.median,time_stats.attn_decode.median\n";

static void write_file(const char *name, const char *head, const char *rows)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(head, f);
    fputs(rows, f);
    fclose(f);
}

/* Reads the tables; returns the status and leaves the message in e and the points in *npts. */
static int read_tables(sim_err *e, int *npts)
{
    char note[512];
    cal_profile *p = cal_profile_new("t");
    int rc = cal_vidur_read(dir, NULL, &tiny_model, 1, p, note, sizeof note, e);
    *npts = p->npts;
    cal_profile_free(p);
    return rc;
}

static void unlink_attention(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/attention.csv", dir);
    unlink(path);
}

static void expect(const char *mlp_rows, const char *attn_rows, const char *frag)
{
    write_file("mlp.csv", MLP_HEAD, mlp_rows);
    write_file("attention.csv", ATTN_HEAD, attn_rows);
    sim_err e = {{0}};
    int n = 0, rc = read_tables(&e, &n);
    if (!frag) {
        if (rc)
            fail_msg("%s", e.msg);
        return;
    }
    if (rc == 0)
        fail_msg("read %d points, expected an error with '%s'", n, frag);
    if (!strstr(e.msg, frag))
        fail_msg("error '%s' lacks '%s'", e.msg, frag);
}

static const char GOOD_MLP[] = "0.01,4,2,64,128,256,1,1\n0.02,4,2,64,128,256,8,1\n";
static const char GOOD_ATTN[] = "64,4,2,1,1,16,0,True,0.01,\n64,4,2,1,4,0,128,False,,0.02\n";

static void huge_and_non_finite(void **state)
{
    expect(GOOD_MLP, GOOD_ATTN, NULL);
    /* the tensor-parallel degree was cast to int: 1e20, inf and nan were undefined behaviour */
    expect("0.01,4,2,64,128,256,1,1e20\n", GOOD_ATTN,
           "no rows with num_tensor_parallel_workers = 1");
    expect("0.01,4,2,64,128,256,1,inf\n", GOOD_ATTN,
           "mlp.csv:2: column num_tensor_parallel_workers: 'inf' is not a number");
    expect("0.01,4,2,64,128,256,1,nan\n", GOOD_ATTN,
           "mlp.csv:2: column num_tensor_parallel_workers: 'nan' is not a number");
    expect(GOOD_MLP, "64,4,2,1e20,1,16,0,True,0.01,\n",
           "attention.csv: no rows with num_tensor_parallel_workers = 1");
    expect(GOOD_MLP, "64,4,2,-inf,1,16,0,True,0.01,\n",
           "attention.csv:2: column num_tensor_parallel_workers: '-inf' is not a number");
    /* 1.5 workers is not 1 (a cast made it 1) */
    expect("0.01,4,2,64,128,256,1,1.5\n", GOOD_ATTN,
           "no rows with num_tensor_parallel_workers = 1");
    /* sizes the cost model turns into integers */
    expect("0.01,4,2,64,128,256,1e20,1\n", GOOD_ATTN,
           "mlp.csv:2: column num_tokens: 1e20 is not a size (a whole number in 1 .. 2147483647)");
    expect("0.01,4,2,64,128,256,2.5,1\n", GOOD_ATTN, "column num_tokens: 2.5 is not a size");
    expect(GOOD_MLP, "64,4,2,1,nan,16,0,True,0.01,\n",
           "attention.csv:2: column batch_size: 'nan' is not a number");
    expect(GOOD_MLP, "64,4,2,1,1,16,1e300,True,0.01,\n",
           "attention.csv:2: column kv_cache_size: 1e300 is not a size");
    expect(GOOD_MLP, "64,4,2,1,4,0,-1,False,,0.02\n", "column kv_cache_size: -1 is not a size");
    /* a time too long to stay finite in ns is not a point */
    write_file("mlp.csv", MLP_HEAD, "0.01,4,2,64,128,256,1,1\n1e306,4,2,64,128,256,2,1\n");
    write_file("attention.csv", ATTN_HEAD, GOOD_ATTN);
    sim_err e = {{0}};
    int n = 0;
    assert_int_equal(read_tables(&e, &n), 0);
    assert_int_equal(n, 3); /* add at 1 token, both attention rows */
}

static void empty_mlp(void **state)
{
    write_file("mlp.csv", "", "");
    sim_err e = {{0}};
    int n = 0;
    assert_int_equal(read_tables(&e, &n), -1);
    assert_non_null(strstr(e.msg, "mlp.csv: empty file (no header row)"));
    write_file("attention.csv", "", "");
    write_file("mlp.csv", MLP_HEAD, GOOD_MLP);
    assert_int_equal(read_tables(&e, &n), -1);
    assert_non_null(strstr(e.msg, "attention.csv: empty file (no header row)"));
}

/* Found by fuzz_vidur: rows that match the model but carry no operator time left no point,
 * and sorting the empty list passed qsort a NULL array (undefined behaviour); such tables are
 * now refused. Its input is tests/fuzz/corpus/vidur/regression-no-times. */
static void rows_without_times(void **state)
{
    write_file("mlp.csv",
               "i,,,n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,num_tokens,"
               "num_tensor_parallel_workers\n",
               ",,0,4,2,64,128,256,1,1,,");
    unlink_attention();
    sim_err e = {{0}};
    int n = 0;
    assert_int_equal(read_tables(&e, &n), -1);
    assert_non_null(strstr(e.msg, "mlp.csv: 1 rows at tp 1 but no operator time in them"));
    /* every time column empty or unusable */
    write_file("mlp.csv", MLP_HEAD, ",4,2,64,128,256,1,1\n-1,4,2,64,128,256,2,1\n");
    assert_int_equal(read_tables(&e, &n), -1);
    assert_non_null(strstr(e.msg, "2 rows at tp 1 but no operator time"));
}

LLMSIM_TESTS(tests, huge_and_non_finite, empty_mlp, rows_without_times);

int main(void)
{
    return scratch_run_group(tests, dir, "/tmp/llmsim-vidur-XXXXXX");
}
