/*
 * scn_data.h: the public data sets that shipped scenarios, validation sets and benchmarks read
 * in place from ../shared/data (beside the checkout; llmsim ships none of them), for messages:
 * a file there that cannot be opened is named with the data set it belongs to and where that
 * data set comes from (docs/scenarios.md, "Reference data").
 */
#ifndef SCN_DATA_H
#define SCN_DATA_H

/* The data set a path under a shared/data/ folder belongs to and where it comes from, as a
 * phrase ("the Azure LLM inference trace 2023 (GitHub Azure/AzurePublicDataset, ...)"); NULL
 * for any other path. The string is static. */
const char *scn_data_source(const char *path);

#endif
