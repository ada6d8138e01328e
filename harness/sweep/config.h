/* Internal to libsamebits: the configuration space of a case's sweep.
 *
 * A configuration is a point on the axes the case and the command line
 * ask for; each axis is one descriptor in the table of config.c (its name,
 * its values at a point, what its value does to the child's case, its part
 * of the configuration's name and of the work files' names). The sweep
 * (sweep.c) runs the points in order in one loop, every point judged,
 * located and reported the same way. */
#ifndef SB_SWEEP_CONFIG_H
#define SB_SWEEP_CONFIG_H

#include "sb_harness.h"

/* A point: the run it becomes (threads, repeat, batch, ranks, env and the
 * expectation set; the rest zero), and its group: points that differ only
 * in the repeat share one, and are judged together. */
typedef struct sb_config {
    sb_run_result x;
    int group;
} sb_config;

/* Every point of case c under options o, in sweep order, into *out (free
 * it); SB_ERR_USAGE with err (one line naming the case) for a space that
 * cannot be swept: a thread count out of range or listed twice, --ranks on
 * a case without [parallel], a resume step of a case with no resume hook
 * (sb_case_resume_refusal) or not before its run's last step (a command
 * case's: its golden's last step; golden NULL, not checked), an
 * instruction set this CPU lacks, nothing to sweep; SB_ERR_NO_MPI for
 * ranks without MPI. */
sb_status sb_configs_make(const sb_case *c, const sb_sweep_options *o, const sb_trace *golden,
                          sb_config **out, int *n, char *err, size_t errlen);

/* Whether some point of c under o is judged against the case's golden
 * (the batch axis's points are judged against their reference size). */
bool sb_configs_need_golden(const sb_case *c, const sb_sweep_options *o);

/* The case the children of point x run: c with x's values applied by each
 * axis (run_batch, run_ranks, run_resume_at, run_env ...). */
void sb_config_case(sb_case *at, const sb_case *c, const sb_run_result *x);

/* The case the reference of batch point x runs: at the reference size, at
 * x's threads and environment. */
void sb_config_batch_reference(sb_case *at, const sb_case *c, const sb_run_result *x);

/* The work files' stem of run x of case `name` in work_dir:
 * <work>/<name>[.b<B>][.n<R>][.k<K>].t<T>[.isa-<I>][.<VAR>-<v>...].r<N>; false
 * when it does not fit. */
bool sb_config_stem(char *out, size_t len, const char *work_dir, const char *name,
                    const sb_run_result *x);

/* Whether x is a point of the threads axis alone (no batch, ranks or
 * environment): what the census has a column for. */
bool sb_config_threads_only(const sb_run_result *x);

/* x's axes but threads and repeat as the table's axis column says them
 * ("batch 16", "ranks 3", "isa avx2 OMP_SCHEDULE static"); "" on none. */
void sb_config_axes_text(char *out, size_t len, const sb_run_result *x);

/* The variables the harness sets in every child itself, which no
 * environment axis may set: NULL-terminated. */
extern const char *const sb_config_reserved_env[];
/* name is one of sb_config_reserved_env, or SAMEBITS_ISA (the --isa axis):
 * err says which and why. */
bool sb_config_env_reserved(const char *name, char *err, size_t errlen);

/* An environment axis from its variable and a comma-separated list of
 * values ("static, dynamic"; spaces around each dropped): into *a; false
 * with err (what is wrong, without a position) for a name that is no
 * variable name or is the harness's own (sb_config_env_reserved; isa true
 * takes SAMEBITS_ISA, the isa axis), an empty value or too many. */
bool sb_env_axis_parse(sb_env_axis *a, const char *name, const char *values, bool isa,
                       char *err, size_t errlen);
/* --env NAME=v1,v2 (isa false) or --isa LIST into *a, as sb_env_axis_parse. */
bool sb_env_axis_option(sb_env_axis *a, const char *arg, bool isa, char *err, size_t errlen);
/* Takes --isa LIST and every --env NAME=v1,v2 (which may repeat) out of
 * argv[first..*argc), into env[0..*n) (each variable once), *argc then the
 * count of what is left; false with err ("--env: why") on a bad one. */
bool sb_env_options_take(sb_env_axis env[SB_ENV_AXES_MAX], int *n, int *argc, char **argv,
                         int first, char *err, size_t errlen);

#endif
