/*
 * data.c: which public data set a file under ../shared/data belongs to (scn_data.h).
 */
#include <string.h>

#include "scn_data.h"

/* MODEL: each folder's SOURCE.md in ../shared/data (origin repository, folder and licence). */
static const struct {
    const char *folder; /* under shared/data/ */
    const char *what;
} sources[] = {
    {"traces/azure-llm-2023/",
     "the Azure LLM inference trace 2023 (GitHub Azure/AzurePublicDataset, "
     "data/AzureLLMInferenceTrace_{conv,code}.csv, CC-BY-4.0)"},
    {"traces/etalon-processed/",
     "the ShareGPT and BWB request-length tables of Sarathi-Serve and Vidur (GitHub "
     "project-etalon/etalon, data/processed_traces/, Apache-2.0)"},
    {"traces/mooncake-fast25/",
     "the Mooncake FAST'25 traces (GitHub kvcache-ai/Mooncake, FAST25-release/traces/, "
     "Apache-2.0)"},
    {"traces/vidur-processed/",
     "Vidur's processed traces (GitHub microsoft/vidur, data/processed_traces/, MIT)"},
    {"traces/servegen-deepseek-r1/",
     "ServeGen's DeepSeek-R1 client data (GitHub alibaba/ServeGen, data/reason/deepseek-r1/, "
     "Apache-2.0)"},
    {"models/", "the model configs that Hugging Face repositories publish (each model's "
                "config.json)"},
    {"speculative/", "InferenceX's measured acceptance lengths (GitHub SemiAnalysisAI/InferenceX, "
                     "golden_al_distribution/, Apache-2.0)"},
    {"validation/", "aiconfigurator's measured serving runs (GitHub ai-dynamo/aiconfigurator, "
                    "systems/silicon_sample.csv, Apache-2.0)"},
    {"vidur/", "Vidur's profiling tables (GitHub microsoft/vidur, data/profiling/, MIT)"},
};

const char *scn_data_source(const char *path)
{
    static const char root[] = "shared/data/";
    const char *at = path ? strstr(path, root) : NULL;
    if (!at)
        return NULL;
    at += sizeof root - 1;
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++)
        if (strncmp(at, sources[i].folder, strlen(sources[i].folder)) == 0)
            return sources[i].what;
    return "public reference data (its folder's SOURCE.md names the origin)";
}
