/*
 * cli.h: the llmsim subcommands. Each takes the arguments after its name (argv[0] is the
 * subcommand) and returns the process exit status: 0 on success, 1 on a user error (message on
 * stderr), 2 on bad usage.
 */
#ifndef LLMSIM_CLI_H
#define LLMSIM_CLI_H

int cmd_run(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_scenario(int argc, char **argv);  /* scenario check FILE */
int cmd_calibrate(int argc, char **argv); /* calibrate ..., calibrate validate ... */
int cmd_profile(int argc, char **argv);   /* profile list|show|import-vidur */
int cmd_sweep(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_capacity(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_bench(int argc, char **argv);

/* Shared option parsing: returns the value of --name (or --name=value) at argv[*i], advancing
 * *i, or NULL when argv[*i] is not that option. Exits with usage status 2 when the value is
 * missing. */
const char *cli_opt(int argc, char **argv, int *i, const char *name);

#endif
