/*
 * cmd_common.h: what the subcommands share: the catalog resolver for scenarios, loading a
 * scenario with overrides, building the run's predictor, and describing this machine.
 */
#ifndef LLMSIM_CMD_COMMON_H
#define LLMSIM_CMD_COMMON_H

#include <stdio.h>

#include "engine.h"
#include "scenario.h"
#include "store.h"

/* The resolver backed by calibration's catalogs and config.json reader. */
const scn_resolver *cmd_resolver(void);

/* Builds the predictor a scenario asks for: the built-in roofline, or the named profile from
 * the database s (may be NULL when no profile is named). 0, or -1 with err. */
int cmd_predictor(const scn_scenario *scn, store *s, eng_predictor *out, sim_err *err);
void cmd_predictor_free(eng_predictor *p);

/* One line describing the host (CPU model, cores) for the runs table. */
const char *cmd_hardware(char *buf, size_t len);

/* Prints the summary table of a run to f. */
void cmd_print_summary(FILE *f, const eng_metric *m, int n);
/* Prints the summary as one JSON object (vLLM benchmark keys) to f. */
void cmd_print_json(FILE *f, const eng_metric *m, int n);

#define CMD_MAX_SETS 64

#endif
