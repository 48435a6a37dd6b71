/*
 * csv.h: one CSV line split into fields, for every reader of comma-separated tables (traces,
 * profiling tables, measurement tables).
 *
 * Fields are separated by commas. A field that starts with a double quote runs to the closing
 * quote and may hold commas and "" for a quote (RFC 4180), but no line break. The split is done
 * in place: the fields point into the line, unquoted.
 */
#ifndef SIM_CSV_H
#define SIM_CSV_H

enum { SIM_CSV_TRIM = 1 }; /* spaces and tabs around a field (outside its quotes) are dropped */

/* Splits line in place; the first max field pointers go to fields. Returns the number of
 * fields (more than max when the line has more), or -1 with *why saying what is wrong (a
 * quoted field not closed, text after a closing quote). */
int sim_csv_split(char *line, unsigned flags, char **fields, int max, const char **why);
/* The most fields line can split into (its commas + 1): enough room for sim_csv_split. */
int sim_csv_width(const char *line);

#endif
