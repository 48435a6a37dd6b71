/*
 * alias.c: the names people give GPUs and models, mapped to the catalogs' (kept apart from the
 * catalog tables so each can change alone), and the nearest valid names for an unknown one.
 *
 * GPUs: the catalog's names in any case, and the usual spellings of the same part ("h100",
 * "H100-SXM5", "h200-sxm", "b200-sxm", "rtx4090"). A spelling that could mean parts the
 * catalog tells apart ("a100": 40 or 80 GB; "mi300": X or A) is not an alias: its error lists
 * the candidates. Models: a Hugging Face id ("meta-llama/Llama-3.1-8B-Instruct") names the
 * catalog entry whose config it shares: the organisation, a "Meta-" prefix and the suffixes of
 * tuned variants (-Instruct, -Chat, -hf, -it, -Base) do not change the architecture; any other
 * difference (an -FP8 checkpoint, another version) is not guessed.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alias.h"
#include "cal_int.h"
#include "catalog.h"
#include "sim.h"

/* GPU aliases (normalized) and the catalog row each names. */
static const cal_name_pair gpu_aliases[] = {
    {"h100", "h100-sxm"},
    {"h100-sxm5", "h100-sxm"},
    {"h100-sxm-80gb", "h100-sxm"},
    {"h100-sxm5-80gb", "h100-sxm"},
    {"h100sxm", "h100-sxm"},
    {"h100-pcie-80gb", "h100-pcie"},
    {"h200-sxm", "h200"},
    {"h200-141gb", "h200"},
    {"h200-sxm-141gb", "h200"},
    {"b200-sxm", "b200"},
    {"b200-180gb", "b200"},
    {"b300-sxm", "b300"},
    {"gb200-nvl72", "gb200"},
    {"gb300-nvl72", "gb300"},
    {"gh200-144gb", "gh200"},
    {"a100-sxm4-80gb", "a100-80gb"},
    {"a100-80g", "a100-80gb"},
    {"a100-sxm4-40gb", "a100-40gb"},
    {"a100-40g", "a100-40gb"},
    {"rtx4090", "rtx-4090"},
    {"geforce-rtx-4090", "rtx-4090"},
    {"rtx5090", "rtx-5090"},
    {"geforce-rtx-5090", "rtx-5090"},
    {"rtx-pro-6000-blackwell", "rtx-pro-6000"},
    {"rtxpro6000", "rtx-pro-6000"},
    {"mi300x-192gb", "mi300x"},
    {"instinct-mi300x", "mi300x"},
    {"instinct-mi325x", "mi325x"},
    {"instinct-mi355x", "mi355x"},
};

/* name lower-cased, '_' and ' ' as '-', into buf. */
static void normalize(const char *name, char *buf, size_t len)
{
    size_t i = 0;
    for (; name[i] && i + 1 < len; i++) {
        char ch = (char)tolower((unsigned char)name[i]);
        buf[i] = ch == '_' || ch == ' ' ? '-' : ch;
    }
    buf[i] = '\0';
}

int cal_gpu_alias(const char *name, char *buf, size_t len)
{
    char n[96];
    eng_gpu g;
    normalize(name, n, sizeof n);
    for (int i = 0; i < cal_gpu_count(); i++)
        if (cal_gpu_at(i, &g) == 0 && strcmp(g.name, n) == 0) {
            snprintf(buf, len, "%s", g.name);
            return 0;
        }
    const char *gpu = CAL_NAME_LOOKUP(gpu_aliases, n);
    if (!gpu)
        return -1;
    snprintf(buf, len, "%s", gpu);
    return 0;
}

/* Strips `suffix` from the end of s (in place): 1 when it did. */
static int strip(char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    if (n <= k || strcmp(s + n - k, suffix) != 0)
        return 0;
    s[n - k] = '\0';
    return 1;
}

/* A model name or Hugging Face id, as the catalog would spell its architecture. */
static void model_key(const char *name, char *buf, size_t len)
{
    const char *slash = strrchr(name, '/');
    normalize(slash ? slash + 1 : name, buf, len);
    if (strncmp(buf, "meta-", 5) == 0)
        memmove(buf, buf + 5, strlen(buf + 5) + 1);
    static const char *const tuned[] = {"-instruct", "-chat", "-hf", "-it", "-base"};
    for (int again = 1; again;) {
        again = 0;
        for (size_t i = 0; i < sizeof tuned / sizeof tuned[0]; i++)
            again |= strip(buf, tuned[i]);
    }
}

int cal_model_alias(const char *name, char *buf, size_t len)
{
    char key[160];
    model_key(name, key, sizeof key);
    for (int i = 0; i < cal_model_count(); i++) {
        eng_model m;
        if (cal_model_at(i, &m) == 0 && strcmp(m.name, key) == 0) {
            snprintf(buf, len, "%s", m.name);
            return 0;
        }
    }
    return -1;
}

/* Hugging Face repositories whose config.json each catalog model is (the instruct variant where
 * one is published, as a serving command names it). */
static const cal_name_pair hf_ids[] = {
    {"llama-2-7b", "meta-llama/Llama-2-7b-chat-hf"},
    {"llama-2-13b", "meta-llama/Llama-2-13b-chat-hf"},
    {"llama-2-70b", "meta-llama/Llama-2-70b-chat-hf"},
    {"llama-3-8b", "meta-llama/Meta-Llama-3-8B-Instruct"},
    {"llama-3-70b", "meta-llama/Meta-Llama-3-70B-Instruct"},
    {"llama-3.1-8b", "meta-llama/Llama-3.1-8B-Instruct"},
    {"llama-3.1-70b", "meta-llama/Llama-3.1-70B-Instruct"},
    {"llama-3.1-405b", "meta-llama/Llama-3.1-405B-Instruct"},
    {"mistral-7b", "mistralai/Mistral-7B-Instruct-v0.1"},
    {"mixtral-8x7b", "mistralai/Mixtral-8x7B-Instruct-v0.1"},
    {"mixtral-8x22b", "mistralai/Mixtral-8x22B-Instruct-v0.1"},
    {"qwen2.5-7b", "Qwen/Qwen2.5-7B-Instruct"},
    {"qwen3-8b", "Qwen/Qwen3-8B"},
    {"qwen3-32b", "Qwen/Qwen3-32B"},
    {"qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B"},
    {"qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B"},
    {"deepseek-v3", "deepseek-ai/DeepSeek-V3"},
    {"deepseek-r1", "deepseek-ai/DeepSeek-R1"},
    {"kimi-k2", "moonshotai/Kimi-K2-Instruct"},
    {"gpt-oss-20b", "openai/gpt-oss-20b"},
    {"gpt-oss-120b", "openai/gpt-oss-120b"},
};

const char *cal_model_hf_id(const char *name)
{
    return CAL_NAME_LOOKUP(hf_ids, name);
}

const char *cal_name_lookup(const cal_name_pair *table, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++)
        if (strcmp(table[i].from, name) == 0)
            return table[i].to;
    return NULL;
}

const char *cal_gpu_nearest(const char *name, char *buf, size_t len)
{
    const char *names[128];
    char nm[128][32];
    int n = 0;
    eng_gpu g;
    for (int i = 0; i < cal_gpu_count() && n < 128; i++)
        if (cal_gpu_at(i, &g) == 0) {
            snprintf(nm[n], sizeof nm[n], "%s", g.name);
            names[n] = nm[n];
            n++;
        }
    char found[512] = "";
    sim_nearest(name, names, n, 4, found, sizeof found);
    snprintf(buf, len, "%s", found);
    return buf;
}

const char *cal_model_nearest(const char *name, char *buf, size_t len)
{
    int n = cal_model_count();
    char(*nm)[64] = sim_xcalloc((size_t)(n > 0 ? n : 1), sizeof *nm);
    const char **names = sim_xcalloc((size_t)(n > 0 ? n : 1), sizeof *names);
    eng_model m;
    for (int i = 0; i < n; i++) {
        if (cal_model_at(i, &m) == 0)
            snprintf(nm[i], sizeof nm[i], "%s", m.name);
        names[i] = nm[i];
    }
    char key[160];
    model_key(name, key, sizeof key);
    sim_nearest(key, names, n, 4, buf, len);
    free(names);
    free(nm);
    return buf;
}
