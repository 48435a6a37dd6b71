/*
 * alias.h: the names people give GPUs and models, mapped to the catalogs' names, and the
 * nearest catalog names for a name that is not one (see alias.c for what is an alias).
 */
#ifndef CAL_ALIAS_H
#define CAL_ALIAS_H

#include <stddef.h>

/* The catalog GPU a name means, into buf: a catalog name in any case, or a usual spelling of
 * one ("h100" and "h100-sxm5": h100-sxm; "h200-sxm": h200; "b200-sxm": b200). 0, or -1 when
 * none (buf untouched). */
int cal_gpu_alias(const char *name, char *buf, size_t len);

/* The catalog model a name or Hugging Face id means ("meta-llama/Llama-3.1-8B-Instruct":
 * llama-3.1-8b) into buf; 0, or -1 when none (buf untouched). */
int cal_model_alias(const char *name, char *buf, size_t len);

/* The Hugging Face repository a serving command names for catalog model `name`, or NULL when
 * the table has none. The string is static. */
const char *cal_model_hf_id(const char *name);

/* The catalog GPUs (models) nearest to an unknown name, "a, b, c" into buf ("" when none is
 * near). Returns buf. */
const char *cal_gpu_nearest(const char *name, char *buf, size_t len);
const char *cal_model_nearest(const char *name, char *buf, size_t len);

#endif
