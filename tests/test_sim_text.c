/*
 * test_sim_text.c: the CSV splitter and the JSON scan and writer every folder shares (sim/csv.h,
 * sim/json.h): RFC 4180 quoting, trimming, malformed rows refused with a reason, members found
 * in place, strings escaped.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "csv.h"
#include "json.h"
#include "test_main.h"

static void csv_fields(void **state)
{
    char line[] = "a,\"b,c\",\"say \"\"hi\"\"\",,e";
    char *f[8];
    const char *why;
    assert_int_equal(sim_csv_width(line), 6);
    assert_int_equal(sim_csv_split(line, 0, f, 8, &why), 5);
    assert_string_equal(f[0], "a");
    assert_string_equal(f[1], "b,c");
    assert_string_equal(f[2], "say \"hi\"");
    assert_string_equal(f[3], "");
    assert_string_equal(f[4], "e");
}

static void csv_trim_and_max(void **state)
{
    char line[] = " 12 ,\t\"x y\" , z,w";
    char *f[2];
    const char *why;
    assert_int_equal(sim_csv_split(line, SIM_CSV_TRIM, f, 2, &why), 4); /* two stored */
    assert_string_equal(f[0], "12");
    assert_string_equal(f[1], "x y");
    char untrimmed[] = " 12 ,b";
    assert_int_equal(sim_csv_split(untrimmed, 0, f, 2, &why), 2);
    assert_string_equal(f[0], " 12 ");
}

static void csv_malformed(void **state)
{
    char open[] = "a,\"b,c";
    char after[] = "\"b\"c,d";
    char *f[4];
    const char *why = NULL;
    assert_int_equal(sim_csv_split(open, 0, f, 4, &why), -1);
    assert_string_equal(why, "a quoted field is not closed");
    assert_int_equal(sim_csv_split(after, 0, f, 4, &why), -1);
    assert_string_equal(why, "text after a quoted field");
}

static void json_scan(void **state)
{
    char line[] = "{\"timestamp\": 27, \"hash_ids\": [1, 2, 3], \"note\": \"a, \\\"b\\\"}\", "
                  "\"input_length\":5}";
    const char *keys[] = {"timestamp", "input_length", "output_length", "hash_ids", "note"};
    char *v[5] = {NULL};
    assert_int_equal(sim_json_scan(line, keys, 5, v), 0);
    assert_string_equal(v[0], "27");
    assert_string_equal(v[1], "5");
    assert_null(v[2]);
    assert_string_equal(v[3], "[1, 2, 3]");
    assert_string_equal(v[4], "\"a, \\\"b\\\"}\"");
    char bad[] = "[1, 2]", unterminated[] = "{\"a\": \"b}";
    assert_int_equal(sim_json_scan(bad, keys, 5, v), -1);
    assert_int_equal(sim_json_scan(unterminated, keys, 5, v), -1);
}

static void json_write(void **state)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sim_jsonw j;
    sim_jsonw_begin(&j, f);
    sim_jsonw_open(&j, NULL, '{');
    sim_jsonw_str(&j, "s", "q\"b\\n\nt\x01");
    sim_jsonw_num(&j, "x", NAN);
    sim_jsonw_open(&j, "a", '[');
    sim_jsonw_int(&j, NULL, 3);
    sim_jsonw_bool(&j, NULL, 1);
    sim_jsonw_close(&j, ']');
    sim_jsonw_close(&j, '}');
    fclose(f);
    assert_string_equal(buf,
                        "{\"s\": \"q\\\"b\\\\n\\nt\\u0001\", \"x\": null, \"a\": [3, true]}\n");
    free(buf);
}

LLMSIM_TEST_MAIN(NULL, NULL, csv_fields, csv_trim_and_max, csv_malformed, json_scan, json_write)
