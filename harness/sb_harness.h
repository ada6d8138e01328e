/* libsamebits' own stages, below the user API of samebits.h: case files,
 * running one configuration, NumPy files, child processes, comparing and
 * locating, origins, results and reports, axes, the census, sweeping a case
 * and the sweep driver. One folder of harness/ per stage; docs/ARCHITECTURE.md
 * draws the flow, the types that travel and the rule of the layers. Used by
 * the `samebits` command, the library and the project's own tools and tests;
 * not installed, not a promise to a user's program.
 */
#ifndef SB_HARNESS_H
#define SB_HARNESS_H

#include "samebits.h"

/* ---- traces: writing, checking, goldens -------------------------------------- */
/* Appends a record for the probe point (copies names, hashes the tensor: the
 * root from p->leaves when given, which must then be the tensor's leaves by
 * sb_hash_leaf). */
sb_status sb_trace_add_probe(sb_trace *t, const sb_probe_point *p);
sb_status sb_trace_add_metrics(sb_trace *t, const sb_epoch_metrics *m);
sb_status sb_trace_write(const sb_trace *t, FILE *f);
/* Index of the latest record named `name` before record `before`, or -1. */
long sb_trace_find_latest(const sb_trace *t, const char *name, size_t before);
/* The probe graph (trace/graph.c): SB_ERR_INPUT, err "step S probe P: ...",
 * at the first record with no op, with the name of an earlier record of its
 * step, or with an input that is no earlier record's name (nor
 * SB_TRACE_UNTRACED). external_inputs: such an input is a warning line on
 * warn (NULL: none), for a producer that names inputs it does not probe. */
sb_status sb_trace_check_graph(const sb_trace *t, bool external_inputs, FILE *warn, char *err,
                               size_t errlen);

/* A trace written to path as every report file is (harness/REPORTS.md,
 * "Report files"): a regular file replaced atomically (temporary file,
 * fsync, rename), a symbolic link followed, a device written in place. On
 * an error err says why and the old file is left as it was; SB_ERR_USAGE
 * for an incomplete header. */
sb_status sb_trace_save(const sb_trace *t, const char *path, char *err, size_t errlen);
/* Golden files are traces saved so (sb_trace_save): an interrupted write
 * leaves the old golden intact. */
sb_status sb_golden_write(const sb_trace *t, const char *path, char *err, size_t errlen);
/* Refuses a wrong format version or a case-digest mismatch, saying how to
 * regenerate (`samebits golden CASE`). */
sb_status sb_golden_read(sb_trace *t, const char *path, const char *expect_digest,
                         char *err, size_t errlen);
/* sb_golden_read whose hint names `regenerate`, the command that remakes
 * this golden (a user's program: "PROG golden NAME"); NULL: as sb_golden_read. */
sb_status sb_golden_read_hinted(sb_trace *t, const char *path, const char *expect_digest,
                                const char *regenerate, char *err, size_t errlen);
/* What `samebits golden` and a user's program do with a new reference trace
 * (harness/CLI.md "golden"). */
typedef enum sb_golden_mode {
    SB_GOLDEN_MODE_NEW,         /* write a missing golden; a changed one is left as it was */
    SB_GOLDEN_MODE_CHECK,       /* write nothing (--check) */
    SB_GOLDEN_MODE_UPDATE,      /* rewrite a changed golden (--update) */
    SB_GOLDEN_MODE_REORDERING,  /* rewrite it when every change can be a reordering
                                 * (--update=reordering) */
} sb_golden_mode;

typedef enum sb_golden_outcome {
    SB_GOLDEN_NEW,              /* written where there was none */
    SB_GOLDEN_UNCHANGED,        /* same bits: the file left as it was */
    SB_GOLDEN_UPDATED,          /* changed and rewritten */
    SB_GOLDEN_CHANGED,          /* changed (or missing, with --check) and left as it was */
} sb_golden_outcome;

/* Compares t with the golden at path and writes it as mode allows. said gets
 * one line: "new (N probes)", "unchanged (N probes)", or "changed: first at
 * step S probe P; K origins: possible reordering at step S P (OP), beyond
 * bound at ..." (an op with no reduction: beyond bound; one with a
 * reduction: a possible reordering, its bound not checked since a golden
 * keeps hashes only) followed by "; rewritten" or why it was not. A golden
 * whose header names another case than t's is never rewritten
 * (SB_ERR_INPUT); one that does not read is replaced only in
 * SB_GOLDEN_MODE_UPDATE. On an error err says why and the old golden is
 * left as it was. */
sb_status sb_golden_update(const sb_trace *t, const char *path, sb_golden_mode mode,
                           sb_golden_outcome *outcome, char *said, size_t saidlen, char *err,
                           size_t errlen);
/* The exit status of a golden command over several cases, from two: input
 * error, then crash, then SB_EXIT_UNEXPECTED (a golden changed and not
 * written), then SB_EXIT_OK. */
int sb_golden_exit_worst(int a, int b);

/* ---- case files ---------------------------------------------------------- */


typedef enum sb_case_kind {
    SB_CASE_KERNEL,
    SB_CASE_TRAIN,
    SB_CASE_COMMAND,            /* any program that writes a trace (harness/PRODUCERS.md) */
} sb_case_kind;

/* "kernel", "train", "command" */
const char *sb_case_kind_name(sb_case_kind k);
/* The kind a name says; false when it names none. */
bool sb_case_kind_from_name(const char *name, sb_case_kind *k);

#define SB_MAX_BATCH 4096           /* largest batch size on the batch axis */
#define SB_MAX_BATCH_SIZES 16       /* batch sizes one case lists */
#define SB_MAX_BATCH_SAMPLES 8      /* samples followed through every batch */
#define SB_MAX_RANKS 16     /* rank counts of a [parallel] case, each at most this */

/* The environment axes (harness/sweep/config.h): a variable of the child's
 * environment and the values a sweep sets it to, one per configuration.
 * The instruction-set axis is the variable SAMEBITS_ISA ("all": every path
 * this CPU runs). */
#define SB_ENV_AXES_MAX 6           /* variables one sweep varies */
#define SB_ENV_VALUES_MAX 16        /* values of one variable */
#define SB_ENV_NAME_CHARS 64
#define SB_ENV_VALUE_CHARS 64
typedef struct sb_env_axis {
    char name[SB_ENV_NAME_CHARS];
    char values[SB_ENV_VALUES_MAX][SB_ENV_VALUE_CHARS];
    int n_values;
} sb_env_axis;
/* One variable of a configuration: "NAME=value". */
typedef char sb_env_setting[SB_ENV_NAME_CHARS + SB_ENV_VALUE_CHARS];
#define SB_MAX_RESUME 16       /* [sweep] resume steps at most */

typedef struct sb_case {
    char path[512];
    char name[128];
    sb_case_kind kind;
    sb_family family;

    /* kind = kernel: op and parameters (tensors described by
     * sb_op_call_describe), inputs drawn from the RNG with `seed` */
    sb_op_call call;
    /* kind = train */
    char model[64];             /* a model of the registry (sb_model_find):
                                 * "keras_mnist_cnn", "char_gpt" */
    char dataset[64];           /* "mnist" or "fashion-mnist" */
    int64_t train_begin, train_end, test_begin, test_end;
    sb_train_config train;
    /* kind = command: the [command] section, placeholders unexpanded
     * (harness/PRODUCERS.md), run in command_dir (the case file's directory) */
    char command_run[256];
    char command_dump[256];     /* appended when a probe is dumped */
    char command_stream[256];   /* appended when the run streams; "": it does not */
    char command_stop[256];     /* appended for the process that stops at a resume step and
                                 * writes its checkpoint; "": no resume hook */
    char command_restore[256];  /* appended for the process that restores it; "": none */
    char command_dir[512];
    char command_version[64];   /* [command] version: in the digest, for the producer's
                                 * author to change when its records change */

    uint64_t seed;
    int threads[SB_MAX_THREADS];
    int n_threads;
    int repeats;
    int repeats_at[SB_MAX_THREADS + 1]; /* [sweep] repeats.<T>: runs at T threads; 0: repeats */
    double timeout_seconds;
    int reference_threads;      /* the golden's configuration */
    sb_verdict expect[SB_MAX_THREADS + 1]; /* by thread count: the first of expect_set */
    sb_verdict_set expect_set[SB_MAX_THREADS + 1]; /* accepted verdicts; 0: expect[t] alone */
    bool user;                  /* a user's kernel (sb_user_main): family "user" in traces
                                 * and reports, whatever c->family */
    int64_t user_steps;         /* a user's kernel with a resume hook (save and restore):
                                 * the steps of its run; 0: it cannot resume */
    bool user_external_inputs;  /* a user's kernel whose probes name inputs it never probes
                                 * (sb_user_kernel.external_inputs): its resumed trace too */
    char golden_path[512];      /* golden/<name>.golden unless the case says */
    char digest[33];            /* hex XXH3-128 of what determines the trace */
    /* [case] mutant: the det table with that mutant's op replaced
     * (kernels/mutants/). Not in the digest: a mutant case is checked
     * against the golden of the clean case it mutates. */
    char mutant[64];            /* "" for none */
    bool expect_detected;       /* [expect] detected: some run must diverge */
    sb_op expect_op;            /* [expect] op: where the first divergence must be */
    char expect_probe[128];     /* [expect] probe: the first divergent probe it must be; "" any */
    int64_t expect_step;        /* [expect] step: the step it must be at; -1 any */

    /* [invariance]: the batch axis (FORMATS.md). Not in the digest: the
     * golden's trace does not depend on it. n_batch 0: no batch axis. */
    int batch_sizes[SB_MAX_BATCH_SIZES]; /* the first is the reference */
    int n_batch;
    int batch_samples;          /* samples followed through every batch, 1..SB_MAX_BATCH_SAMPLES */
    int batch_threads[SB_MAX_THREADS]; /* the thread counts the batch axis runs at */
    int n_batch_threads;
    sb_verdict_set batch_expect[SB_MAX_BATCH_SIZES]; /* accepted at each size */
    sb_verdict_set batch_expect_default; /* [invariance] expect: at sizes without expect.<B> */
    /* A run on the batch axis (`samebits run --batch N`, sb_sweep_case):
     * the batch size its samples are computed in (0: a run of the case's
     * own computation), and the size of the reference it is compared with
     * (the locator's reference re-run). */
    int run_batch;
    int reference_batch;
    /* [parallel] of a training case: data-parallel training (train.reduce,
     * train.chunk), swept over rank counts, each configuration a job of
     * `mpirun -np R` (harness/mpi/); the golden is the run at one rank. */
    int ranks[SB_MAX_RANKS];
    int n_ranks;                /* 0: not a rank case */
    sb_verdict_set expect_ranks[SB_MAX_RANKS + 1]; /* by rank count above 1: accepted verdicts */
    int run_ranks;              /* the rank count this case's children run at: set per
                                 * configuration by the sweep; 0, one process without mpirun */
    /* [sweep] isa and env.NAME: the environment axes the case sweeps (the
     * command line's --isa and --env replace a variable's values). */
    sb_env_axis env_axes[SB_ENV_AXES_MAX];
    int n_env_axes;
    /* The variables this case's children run with, set per configuration by
     * the sweep (the environment and instruction-set axes); 0: none. */
    sb_env_setting run_env[SB_ENV_AXES_MAX];
    int n_run_env;
    /* [sweep] resume (FORMATS.md): the steps a training case (or a command
     * case with a resume hook) is stopped at, checkpointed and resumed from
     * in a new process. Not in the digest. */
    int resume[SB_MAX_RESUME];
    int n_resume;
    int resume_line;            /* the line of [sweep] resume in the case file; 0: none */
    sb_verdict_set resume_expect; /* [sweep] resume_expect; 0: the thread count's expect */
    int64_t run_resume_at;      /* the step this case's children stop and resume at (two
                                 * processes, harness/run/resume.c); 0: uninterrupted */
} sb_case;

/* err gets "path:line: what was expected". The syntax is in FORMATS.md. */
sb_status sb_case_load(sb_case *c, const char *path, char *err, size_t errlen);
/* sb_golden_read of case c's golden (c->golden_path, checked against
 * c->digest), its hint naming the case file: "regenerate it with
 * `samebits golden CASEFILE`" (`--update CASEFILE` when the golden is
 * there). */
sb_status sb_case_golden_read(sb_trace *t, const sb_case *c, char *err, size_t errlen);
/* Puts c on the batch axis at sizes[0..n) (`sweep --batch`), the first the
 * reference: a size the case lists keeps its expectation, any other takes
 * the case's [invariance] expect; a case without [invariance] gets its
 * defaults (2 samples, the reference thread count, expect identical).
 * SB_ERR_USAGE (err) for a kernel case whose op has no per-sample output. */
sb_status sb_case_batch_override(sb_case *c, const int *sizes, int n, char *err, size_t errlen);

/* The family a report or trace header names for case c: "user" for a user's
 * kernel, else its family's name. */
static inline const char *sb_case_family_label(const sb_case *c)
{
    return c->user ? "user" : sb_family_name(c->family);
}

/* The training steps a whole run of case c takes: epochs of ceil(train
 * samples / batch) steps, cut at the case's max_steps. 0 for a kernel case. */
int64_t sb_case_train_steps(const sb_case *c);
/* NULL when case c can stop at a step and resume in a new process (a
 * training case without [parallel], a command case with [command] stop and
 * restore, a user's kernel with save and restore); else why not, a phrase
 * for after "resume: ". */
const char *sb_case_resume_refusal(const sb_case *c);

/* The header of a trace of case c run at `threads`: format version, case
 * name and digest, the case's family, and this build's samebits version,
 * compiler and options. */
void sb_trace_header_from_case(sb_trace_header *h, const sb_case *c, int threads);
/* The case name, digest and family of h set to case c's, the rest left. */
void sb_trace_header_name(sb_trace_header *h, const sb_case *c);

/* ---- running one configuration ------------------------------------------- */

/* The probes one run dumps, each at its own step (`run --dump-list FILE`: a
 * line "STEP<tab>PROBE" each, harness/FORMATS.md); their files go into
 * <dump_dir>/<step>/. */
typedef struct sb_dump_item {
    int64_t step;
    char probe[128];
} sb_dump_item;

typedef struct sb_dump_list {
    sb_dump_item *items;
    int n;
} sb_dump_list;

/* SB_ERR_USAGE for a probe name that is empty, too long or holds a tab, a
 * newline or '/'. */
sb_status sb_dump_list_add(sb_dump_list *l, int64_t step, const char *probe);
/* SB_ERR_INPUT (err: "FILE:LINE: ...") for a line that is not STEP<tab>PROBE
 * or a file with none. */
sb_status sb_dump_list_read(sb_dump_list *l, const char *path, char *err, size_t errlen);
sb_status sb_dump_list_write(const sb_dump_list *l, const char *path, char *err, size_t errlen);
int64_t sb_dump_list_last_step(const sb_dump_list *l);
void sb_dump_list_free(sb_dump_list *l);

typedef struct sb_run_options {
    int threads;
    const char *dump_probe;     /* NULL, or probe name to dump ... */
    int64_t dump_step;          /* ... at this step */
    const sb_dump_list *dump_list; /* NULL, or every probe to dump (dump_probe NULL and
                                 * dump_all false): into <dump_dir>/<step>/ */
    const char *dump_dir;       /* <dir>/<probe>.npy, <probe>.bound.npy, <probe>.in<i>.npy */
    const char *data_dir;       /* where the IDX files are (default "data") */
    bool dump_all;              /* dump_probe NULL: dump every probe of dump_step, and
                                 * <dir>/manifest.tsv (name, op, inputs; program order) */
    bool no_fused_hash;         /* training: hash every probed tensor here, none from the
                                 * model's leaf digests (the trace is the same either way) */
    int64_t max_steps;          /* > 0: a training case stops after this many steps, with
                                 * no evaluation of the epoch it cuts, or earlier when
                                 * its own max_steps says so; 0: no limit */
    const char *stream_path;    /* NULL, or where to write the trace stream as the run goes */
    const sb_grad_combine *combine; /* a [parallel] case in a job of several processes: how
                                 * this rank combines gradients with the others
                                 * (harness/mpi/); NULL: the only rank */
    bool external_inputs;       /* the run's probes name inputs they never probe: a
                                 * warning, not an error (sb_trace_check_graph) */
    const char *checkpoint;     /* a training case: NULL, or with stop_at > 0 the checkpoint
                                 * it writes after stop_at steps and stops; with stop_at 0
                                 * the checkpoint it resumes from (FORMATS.md) */
    int64_t stop_at;
} sb_run_options;

/* The case's kernel table: its family's, or for a mutant case the det table
 * with the mutant's op replaced. */
const sb_kernel_table *sb_case_kernels(const sb_case *c);
/* A training run of case c's model (sb_model_find(c->model)) on its data
 * set and ranges with kernels k and settings cfg; no probes. */
sb_model_run sb_case_model_run(const sb_case *c, const sb_kernel_table *k,
                               const sb_train_config *cfg, const char *data_dir);

/* Runs the case once in this process and fills the trace. When it dumps
 * (dump_probe or dump_all; dump_list: its last step), a training case stops
 * after step dump_step (with
 * no evaluation of the epoch it cuts, as with max_steps): the trace
 * holds every record up to the dump, not the whole run. */
sb_status sb_run_case(const sb_case *c, const sb_run_options *o, sb_trace *out,
                      char *err, size_t errlen);

/* The probe hook of a run, for sb_run_case and for a user's own program
 * (sb_user_main): appends every probe to the trace and, when the options name
 * a probe and step, dumps that probe, its bound and its live inputs. The first
 * failure is kept in status/err and later probes are ignored.
 *
 * A probe's leaf digests (sb_probe_point.leaves) are used only when
 * trust_leaves is set, which sb_run_case does when it hands sb_hash_leaf to
 * the library's own model (whose kernels make digests only in the hashed mode
 * that sb_op_call_run_hashed pairs with them); otherwise every tensor is
 * hashed here, so a user's program or a kernel under test cannot pass off
 * digests of its own. */
typedef struct sb_run_sink {
    sb_trace *trace;
    const sb_run_options *o;
    struct sb_trace_stream *stream; /* o->stream_path open, else NULL */
    bool trust_leaves;          /* false after sb_run_sink_init */
    sb_status status;
    bool dumped;                /* the requested probe (every one of dump_list) was written */
    bool *list_dumped;          /* dump_list: which items were written */
    int list_left;              /* dump_list: items not written yet */
    char err[256];
} sb_run_sink;

void sb_run_sink_init(sb_run_sink *s, sb_trace *t, const sb_run_options *o);
sb_probe_fn sb_run_sink_probe;  /* ctx: sb_run_sink */
sb_op_start_fn sb_run_sink_op_start; /* ctx: sb_run_sink; a "start" line in the stream */
/* SB_ERR_INPUT when a dump was asked for and its probe never came, or when
 * the probe graph is wrong (sb_trace_check_graph, with o->external_inputs,
 * warnings on stderr). Closes the stream. */
sb_status sb_run_sink_finish(sb_run_sink *s, char *err, size_t errlen);
/* Closes the stream of a run that ends without sb_run_sink_finish. */
void sb_run_sink_close(sb_run_sink *s);

/* ---- NumPy files ---------------------------------------------------------- */
sb_status sb_npy_write(const char *path, const sb_tensor *t);
/* Allocates t->data; caller frees it. */
sb_status sb_npy_read(const char *path, sb_tensor *t, char *err, size_t errlen);

/* ---- child processes -------------------------------------------------------
 * posix_spawn of argv with OMP_NUM_THREADS=threads and OMP_DYNAMIC=false;
 * never fork after OpenMP has started. */
typedef enum sb_child_end {
    SB_CHILD_EXITED,
    SB_CHILD_SIGNALED,
    SB_CHILD_TIMED_OUT,
    SB_CHILD_NO_CHECKPOINT,     /* exited 0 from a run asked to stop and write a checkpoint,
                                 * and left none (a missing or empty file): a failed run */
} sb_child_end;

typedef struct sb_child_result {
    sb_child_end end;
    int exit_code;
    int signal;
    double seconds;
    int start_errno;            /* why the program could not be started (SB_ERR_IO), else 0 */
} sb_child_result;

sb_status sb_spawn(char *const argv[], int threads, double timeout_seconds,
                   sb_child_result *r);

/* sb_spawn with the rest of the choices. argv[0] is looked up in PATH when it
 * has no slash. A timed-out child gets SIGTERM, then SIGKILL after a grace
 * period, and is always reaped. SB_ERR_IO when the program cannot be started
 * (r->start_errno says why). */
typedef struct sb_spawn_options {
    int threads;                /* OMP_NUM_THREADS; 0 keeps the environment's */
    double timeout_seconds;     /* <= 0: wait as long as it takes */
    bool unset_proc_bind;       /* drop OMP_PROC_BIND and OMP_PLACES from the child's environment */
    const char *stderr_path;    /* NULL: the child writes to our stderr; else to this file (truncated) */
    bool own_group;             /* the child leads a process group of its own, and a timeout
                                 * kills the whole group (an mpirun job and its ranks) */
    bool mpi_as_root;           /* as root: let mpirun run (OMPI_ALLOW_RUN_AS_ROOT and its
                                 * confirmation in the child's environment) */
    const sb_env_setting *env;  /* [n_env] "NAME=value" set in the child, replacing ours */
    int n_env;
} sb_spawn_options;

sb_status sb_spawn_with(char *const argv[], const sb_spawn_options *o, sb_child_result *r);

/* The case's reference configuration in a child (its trace and stderr
 * through work_dir), into *t: what a golden is made of. SB_EXIT_OK;
 * SB_EXIT_INPUT or SB_EXIT_CRASH (crashed or timed out) with err, the
 * child's own line in it. */
int sb_reference_run(const sb_case *c, const char *self_exe, const char *work_dir, sb_trace *t,
                     char *err, size_t errlen);

/* ---- comparing and locating ---------------------------------------------- */

typedef struct sb_elem_diff {
    size_t total, differing;
    double max_abs, max_rel, max_ulp;
    size_t first_index;         /* valid when differing > 0 */
    size_t n_ranges;            /* differing [begin, end) index ranges */
    size_t ranges[8][2];        /* the first 8 of them */
    size_t nonfinite_a, nonfinite_b;
    double bound_ratio;         /* max over elements of |a-b| / bound (inf if bound 0 and a != b);
                                 * 0 when !bounded */
    bool within_bound;          /* false when !bounded and some element differs */
    bool bounded;               /* a bound is known: a bound was dumped (zeros: the op is
                                 * exact), or the tensor is integer (exact) */
    /* the precision test (harness/NUMERICS.md), where both sides dumped
     * their errors against double precision: the largest ratio of the run's
     * error to the reordering threshold (> 1: a precision loss), at element
     * precision_index, with the two errors and the threshold there */
    bool precision_tested;
    double precision_ratio;
    size_t precision_index;
    double precision_run_err, precision_golden_err, precision_threshold;
} sb_elem_diff;

/* Distance in units in the last place between two floats, counting across
 * zero; 0 for identical bits; INT64_MAX when either is NaN and they differ. */
int64_t sb_ulp_distance(float a, float b);
/* a, b, bound: [n]; bound NULL: no bound is known (bounded false, bound_ratio
 * 0). For a differing pair with a NaN or an infinity, max_abs, max_rel and
 * bound_ratio become inf, and max_ulp becomes inf when sb_ulp_distance says
 * INT64_MAX. */
void sb_elem_diff_f32(sb_elem_diff *d, const float *a, const float *b,
                      const float *bound, size_t n);
/* a, b: [n]; integers have no rounding, so any difference is beyond bound. */
void sb_elem_diff_i32(sb_elem_diff *d, const int32_t *a, const int32_t *b, size_t n);
/* The same for two integer tensors of one dtype and count (i32 or i64). */
void sb_elem_diff_ints(sb_elem_diff *d, const sb_tensor *a, const sb_tensor *b);
/* "bound ratio 0.229", or "no bound known" when !e->bounded: as reports say it. */
void sb_elem_bound_text(char *out, size_t len, const sb_elem_diff *e);

typedef struct sb_divergence {
    bool found;
    size_t index;               /* record index in the run's trace */
    int64_t step;
    char probe[128];
    char op[64];
    bool inputs_identical;
    bool inputs_untraced;       /* an input is SB_TRACE_UNTRACED in either trace (so
                                 * inputs_identical is false) */
    bool structural;            /* traces differ in shape or order, not only in a hash */
    bool have_elements;         /* elem filled by locate */
    bool nondeterministic;      /* locate: no re-run of the run's configuration reproduced
                                 * run_hash (SB_LOCATE_TRIES of them) */
    bool reference_unreproduced; /* locate: no re-run of the reference configuration
                                 * reproduced golden_hash, so nothing was diffed */
    int reruns;                 /* locate: re-runs of the run's configuration it took */
    sb_hash golden_hash, run_hash; /* the two records' hashes (when not structural) */
    sb_elem_diff elem;
} sb_divergence;

/* Fills d for record `index`, which both traces have at the same place:
 * found, index, step, probe and op (the run's record), inputs_identical,
 * inputs_untraced and both hashes. */
void sb_divergence_at(sb_divergence *d, const sb_trace *golden, const sb_trace *run,
                      size_t index);

/* First record, in program order, whose hash (or name, shape) differs. */
void sb_trace_compare(const sb_trace *golden, const sb_trace *run, sb_divergence *d);
/* sb_trace_compare of a run's partial trace (a crashed run's stream) with
 * as many of the golden's records: the first divergence among the records
 * the run made, not the records it never reached. */
void sb_trace_compare_partial(const sb_trace *golden, const sb_trace *partial,
                              sb_divergence *d);
/* sb_trace_compare of the leading records of steps 0..steps-1 of each trace
 * (each cut before its first record of a later step): what a run stopped
 * after `steps` steps can be checked against, the evaluations of the epochs
 * that ended before step `steps` included, the one that closes its partly
 * done epoch left out. A golden of fewer steps is compared whole. */
void sb_trace_compare_steps(const sb_trace *golden, const sb_trace *run, int64_t steps,
                            sb_divergence *d);

/* The reference re-run of one locate, for the next locate of the same case
 * to reuse when it is at the same record (index, step and probe): the
 * diverging thread counts of a sweep usually part from the reference at the
 * same probe, and one reference re-run serves them all. Zeroed: none yet. */
typedef struct sb_locate_reference {
    bool made;
    bool reproduced;            /* its record had golden_hash */
    size_t index;
    int64_t step;
    char probe[128];
    sb_hash golden_hash;        /* of the divergence it was made for */
    char work_dir[1024];        /* the work_dir of the locate that made it */
} sb_locate_reference;

/* Re-runs the case at the reference configuration and at `threads` (each a
 * child `self_exe run CASE --threads N --trace FILE --dump-list FILE
 * --dump-dir DIR`), reads the dumped probe and its bound, and fills d->elem
 * and d->have_elements. The re-run at `threads` must reproduce d->run_hash:
 * it is run up to SB_LOCATE_TRIES times, and when none does, d->nondeterministic
 * is set and nothing is diffed. The reference re-run runs once; when it does
 * not reproduce d->golden_hash, d->reference_unreproduced is set and nothing
 * is diffed. work_dir holds the dumps (kept for the user).
 * reference: NULL, or the reference re-run an earlier locate of this case
 * made, used when it fits and replaced by this one's when it does not. */
sb_status sb_locate(const sb_case *c, const char *self_exe, int threads,
                    const char *work_dir, sb_locate_reference *reference, sb_divergence *d,
                    char *err, size_t errlen);
/* sb_locate of ds[0..n) at once, every dump of a configuration written by
 * one child (`run --dump-list`): one reference re-run dumps the divergences
 * that no reference re-run in refs[0..n_refs) made before (those read its
 * dumps; the new one is kept in refs), and one re-run at `threads` dumps
 * them all, tried again (up to SB_LOCATE_TRIES in all, in
 * <threads>.try<k>) for those it did not reproduce. Each divergence is then
 * judged as sb_locate judges one. An error leaves them all without
 * elements. */
sb_status sb_locate_all(const sb_case *c, const char *self_exe, int threads,
                        const char *work_dir, sb_locate_reference *refs, int n_refs,
                        sb_divergence *const *ds, int n, char *err, size_t errlen);

/* How many times the locator runs a configuration to reproduce the hash it
 * explains before it calls the configuration nondeterministic. */
#define SB_LOCATE_TRIES 3

/* Verdict from a divergence: identical, reordering (inputs identical and
 * every element within bound), unbounded (inputs identical, elements
 * differ, and no bound is known for an op that may reorder: a reordering
 * cannot be told from a bug), nondeterministic (the locator's re-runs did
 * not reproduce the run's hash), or beyond-bound. */
sb_verdict sb_divergence_verdict(const sb_divergence *d);

/* ---- origins ------------------------------------------------------------------
 * An origin is a divergent probe whose every input probe is identical to the
 * golden's: the difference arose in its op. Found from the hashes and input
 * lists of the two traces alone; classifying one needs the locator. */
#define SB_ORIGINS_KEPT 16          /* origins a run result lists */
/* Origins located per run (all of them, in one pair of re-runs) unless
 * --max-origins says fewer: a guard against thousands, not a sample. */
#define SB_ORIGINS_LOCATE_MAX 256

typedef struct sb_origins {
    int count;                  /* origins among the records compared */
    int n;                      /* in list: min(count, SB_ORIGINS_KEPT) */
    int located;                /* the first `located` origins went through the locator
                                 * (may exceed n: list[0..min(n, located)) are of them) */
    int worst;                  /* index in list of the worst located origin; -1: none */
    sb_divergence list[SB_ORIGINS_KEPT];   /* in program order, but for the worst located
                                            * origin, which takes the last place when it
                                            * came after it */
} sb_origins;

/* Every origin of run against golden among the records both have at the same
 * place (up to the first structural difference); steps > 0: only the records
 * of steps 0..steps-1, as sb_trace_compare_steps. o->located 0, worst -1. */
void sb_trace_origins(const sb_trace *golden, const sb_trace *run, int64_t steps,
                      sb_origins *o);
/* The same origins into out[0..min(count, cap)); returns count. */
int sb_trace_origins_list(const sb_trace *golden, const sb_trace *run, int64_t steps,
                          sb_divergence *out, int cap);
/* The index of the worst of list[0..n) as sb_origins_rank ranks, -1 for n 0. */
int sb_divergences_worst(const sb_divergence *list, int n);
/* Sets o->worst over the located origins of list: the highest
 * sb_verdict_rank, a tie going to the larger bound ratio, then to the
 * earlier origin. */
void sb_origins_rank(sb_origins *o);
/* The worst located origin, or NULL (none located, or o never ranked). */
const sb_divergence *sb_origins_worst(const sb_origins *o);

/* ---- results and reports -------------------------------------------------- */

/* Where a run that crashed or timed out had got to, from the trace it wrote
 * as it went (harness/FORMATS.md, "Trace streams"). */
typedef struct sb_crash_site {
    char how[96];               /* "killed by signal 6 (Aborted)", "exited with status 1",
                                 * "timed out after 600.0 s" */
    bool streamed;              /* the stream was read: the fields below hold */
    bool in_op;                 /* an op had started and not made its probe: it died in it */
    int64_t step;               /* of that op, else of the last record */
    char op[64];                /* the op it died in ("" when not in_op) */
    char probe[128];            /* the probe that op was to make ("" when not in_op) */
    char after[128];            /* the last probe recorded ("" none) */
    size_t records;             /* probes recorded before it died */
    char stderr_line[256];      /* the child's first non-empty stderr line ("" none) */
} sb_crash_site;

/* Reads the trace stream at path into t (its records) and *site (from
 * `streamed` to `records`, `how` left empty). A last line the process did not finish is left
 * out. err gets "path:line: expected ..." on SB_ERR_INPUT. */
sb_status sb_trace_stream_read(sb_trace *t, sb_crash_site *site, const char *path, char *err,
                               size_t errlen);

/* ---- axes ----------------------------------------------------------------------
 * What a configuration varies against the case's reference configuration
 * (one thread, the case's own batch, one rank): the thread count; the batch
 * a sample is computed in (its size, with the sample at several positions);
 * the number of processes of a data-parallel job; the step a training run
 * is stopped, checkpointed and resumed at in a new process. */
typedef enum sb_axis {
    SB_AXIS_THREADS, SB_AXIS_BATCH, SB_AXIS_RANKS, SB_AXIS_RESUME, SB_AXIS_COUNT
} sb_axis;

const char *sb_axis_name(sb_axis a);     /* "threads", "batch", "ranks", "resume" */
/* The axis a name says; SB_AXIS_COUNT if unknown. */
sb_axis sb_axis_from_name(const char *name);

typedef struct sb_run_result sb_run_result;
/* A run's configuration as the reports name it, each axis it is on in the
 * order of the axis table (harness/sweep/config.c): "threads=2" on the
 * threads axis, "batch=16 threads=1" on the batch axis, "ranks=3
 * threads=2" on the ranks axis, "resume=3 threads=2" on the resume axis,
 * "threads=2 isa=avx2 OMP_SCHEDULE=dynamic" on the environment axes. */
void sb_run_config_name(const sb_run_result *r, char *out, size_t len);
/* Fills x->crash from how the child ended (*cr), the stream at stream_path
 * and the child's stderr file,
 * and x->div with the first divergence of the records the stream holds
 * (found false when they match the golden's; no elements: nothing is
 * re-run). A stream that is missing or does not read leaves
 * x->crash.streamed false. */
void sb_crash_judge(sb_run_result *x, const sb_child_result *cr, const sb_trace *golden,
                    const char *stream_path, const char *stderr_path);
/* "killed by signal 6 (Aborted) at step 3 in op maxpool_fwd (pool.fwd.out),
 * after probe relu2.fwd.out": how it ended and where, for the reports. */
void sb_crash_describe(char *out, size_t len, const sb_crash_site *s);

struct sb_run_result {
    int threads;
    int repeat;
    sb_axis axis;               /* what this configuration varies; SB_AXIS_THREADS for every
                                 * run of a thread sweep */
    int batch;                  /* SB_AXIS_BATCH: the batch size the samples ran in; else 0 */
    int ranks;                  /* processes; 1 except on SB_AXIS_RANKS */
    int resume_at;              /* SB_AXIS_RESUME: the step the run stopped and resumed at
                                 * (harness/run/resume.h); else 0 */
    int ranks_disagree;         /* SB_AXIS_RANKS: the first rank whose trace parts from rank
                                 * 0's (the run is then nondeterministic, its message says
                                 * where); 0: every rank agrees */
    sb_env_setting env[SB_ENV_AXES_MAX]; /* the environment axes' values, "NAME=value" */
    int n_env;
    sb_verdict verdict;
    sb_verdict expected;        /* the member of expected_set the verdict matched, else its first */
    sb_verdict_set expected_set; /* the verdicts accepted; 0: expected alone */
    sb_divergence div;
    sb_epoch_metrics metrics;   /* last epoch, training runs */
    bool have_metrics;
    double seconds;
    char message[256];          /* crash signal, timeout, error text */
    sb_origins origins;         /* every origin against the golden (count 0: none, or not
                                 * compared: a crash, a timeout) */
    bool origins_capped;        /* origins.count > origins.located: some were not located */
    sb_divergence repeats_part; /* found: the first probe where this run and repeat
                                 * repeats_with of its configuration part */
    int repeats_with;           /* the other repeat (1-based); 0 when repeats_part is unset */
    int64_t max_steps;          /* > 0: truncated: the run stopped after this many steps,
                                 * fewer than its case trains, and only those were compared
                                 * (no metrics); 0: a whole run */
    sb_crash_site crash;        /* crash and timeout: where it died; div then holds the
                                 * first divergence of its partial trace, unlocated */
};

/* How a run stands against its case's expectation. A truncated run that did
 * not diverge in the steps it ran, where the case expects a divergence (or
 * a crash, a timeout) at its thread count, is neither: what the case expects
 * may come after those steps. Every other run is as expected exactly when
 * its verdict is the expected one (a truncated run that diverged did so where
 * the whole run would have first diverged, so its verdict is the whole run's). */
typedef enum sb_outcome {
    SB_OUTCOME_AS_EXPECTED,
    SB_OUTCOME_NOT_AS_EXPECTED,
    SB_OUTCOME_NOT_REACHED,
} sb_outcome;

sb_outcome sb_run_outcome(const sb_run_result *r);
/* What the run was expected to give, as the reports say it: the verdict, or
 * for a set the member it matched, else the whole set ("identical|reordering"). */
void sb_run_expected_name(const sb_run_result *r, char *out, size_t len);
/* The divergence a run's unbounded verdict comes from (its worst origin, else
 * its first divergence), or NULL when the run is not unbounded. */
const sb_divergence *sb_run_unbounded_at(const sb_run_result *r);
/* "no bound is known for op OP (step S PROBE): ...": what an unbounded
 * divergence means and what to add, for the reports. */
void sb_unbounded_text(char *out, size_t len, const sb_divergence *d);

typedef struct sb_case_result {
    const sb_case *c;
    sb_run_result *runs;
    int n_runs;
    bool as_expected;           /* no run is SB_OUTCOME_NOT_AS_EXPECTED */
} sb_case_result;

void sb_report_text(FILE *f, const sb_case_result *r, int n);
/* The shard of a sweep a report is of (`sweep --shard I/N`), index from 1. */
typedef struct sb_report_shard {
    int index, count;
} sb_report_shard;

/* The JSON report (REPORTS.md); shard NULL for an unsharded sweep, else
 * written as "shard": {"index": I, "count": N}. */
sb_status sb_report_json(const char *path, const sb_case_result *r, int n,
                         const sb_report_shard *shard);

/* A JSON report read back: what `samebits report --merge` merges. */
typedef struct sb_report {
    sb_case *cases;             /* [n]: the fields a report holds (name, path, kind, family,
                                 * reference_threads); the rest zero */
    sb_case_result *results;    /* [n]: results[i].c is &cases[i], runs in the report's order */
    int n;
    sb_report_shard shard;      /* {1, 1} for a report without a shard key */
} sb_report;

/* Reads what sb_report_json writes. SB_ERR_INPUT with err "PATH: KEY:
 * expected ..." (or jansson's "PATH:LINE:COLUMN: ...") when the file is not
 * such a report; on any error *rep is left empty. */
sb_status sb_report_json_read(sb_report *rep, const char *path, char *err, size_t errlen);
void sb_report_free(sb_report *rep);
sb_status sb_report_junit(const char *path, const sb_case_result *r, int n);
/* sb_report_junit of a sweep stopped by an input error (error: its one-line
 * message): the cases swept before it, and a testsuite `samebits` whose one
 * testcase `input` holds an <error> with the message, so a CI server shows
 * the run failed rather than a report of fewer tests; error NULL is
 * sb_report_junit. */
sb_status sb_report_junit_input_error(const char *path, const sb_case_result *r, int n,
                                      const char *error);
void sb_report_tap(FILE *f, const sb_case_result *r, int n);
/* The one line saying why the last report file of this process could not be
 * written ("PATH: cannot write, the old file left as it was: No space left
 * on device"), after a writer returned SB_ERR_IO or SB_ERR_USAGE. */
const char *sb_report_error(void);
/* The id every report file of this process carries (REPORTS.md "Report
 * files"): 16 hex digits, random, the same for the JSON, JUnit and census
 * files of one sweep, so a reader can tell reports of two sweeps apart. */
const char *sb_report_sweep_id(void);

/* ---- the census of a sweep (report_census.c, REPORTS.md "Census") -----------
 * One row per output probe of the case (a golden record an op made), one
 * mark per column: a thread count, or a thread count with the environment
 * axes' values (--env, --isa) of a point: '=' the reference's bits, 'R' reordering, 'U'
 * unbounded (no bound known for the op), 'B' beyond bound, 'N'
 * nondeterministic (its repeats differ there), 'd' differs downstream of
 * another output, '?' an origin left unlocated, 'X' the run crashed or
 * timed out; with the worst bound ratio and ULP of the row's located
 * differences. */
#define SB_CENSUS_COLUMNS (2 * SB_MAX_THREADS)

typedef struct sb_census_row {
    int64_t step;
    char probe[128];
    char op[64];
    char cell[SB_CENSUS_COLUMNS];   /* by column; '\0' where not swept */
    bool measured;                  /* some difference was located: max_ulp holds */
    bool bounded;                   /* one of them had a bound: worst_bound_ratio holds */
    double worst_bound_ratio, max_ulp;
} sb_census_row;

typedef struct sb_census {
    const sb_case *c;
    /* a run of each column (its threads and environment), in the sweep's order */
    const sb_run_result *columns[SB_CENSUS_COLUMNS];
    int n_columns;
    sb_census_row *rows;            /* golden order */
    int n_rows;
} sb_census;

/* From a sweep's results, its golden and the run traces the sweep kept in
 * work_dir (keep_traces; a run whose trace is missing counts as dead). The
 * sweep should locate every origin it lists (max_origins at least SB_ORIGINS_KEPT). Runs
 * truncated at N steps (--max-steps) give rows for the golden's steps
 * 0..N-1 only. */
sb_status sb_census_build(sb_census *cs, const sb_case_result *r, const sb_trace *golden,
                          const char *work_dir);
void sb_census_free(sb_census *cs);
/* Removes the run traces a census was built from. */
void sb_census_remove_traces(const sb_case_result *r, const char *work_dir);
void sb_census_text(FILE *f, const sb_census *cs);
void sb_census_markdown(FILE *f, const sb_census *cs);
/* The n censuses' Markdown tables, one after another, into the file at path. */
sb_status sb_census_markdown_file(const char *path, const sb_census *cs, int n);
sb_status sb_census_json(const char *path, const sb_census *cs, int n);

/* ---- sweeping a case ---------------------------------------------------------
 * Every configuration (and repeat) of a case runs in its own child
 * `self_exe run CASE --threads N --trace FILE` (CASE is c->path), is compared
 * with the golden, located when it diverges, and judged against the case's
 * expectation. Children inherit our environment, so SAMEBITS_DATA_DIR reaches
 * them and the locator's re-runs alike. */
typedef struct sb_sweep_options {
    const char *self_exe;       /* a program with the `run` subcommand */
    const char *work_dir;       /* run traces, children's stderr, locate dumps */
    const int *threads;         /* NULL: the case's thread counts */
    int n_threads;
    const int *ranks;           /* a [parallel] case's rank counts; NULL: the case's */
    int n_ranks;
    int repeats;                /* 0: the case's */
    double timeout_seconds;     /* 0: the case's */
    bool progress;              /* a progress line on stderr */
    bool keep_traces;           /* leave each run's trace in work_dir (sb_config_stem.trace) */
    int64_t max_steps;          /* > 0: a training case of more steps runs only this many,
                                 * compared with the golden's first steps alone
                                 * (sb_trace_compare_steps); 0: whole runs */
    int max_origins;            /* origins located per run, 1..SB_ORIGINS_LOCATE_MAX;
                                 * 0: SB_ORIGINS_LOCATE_MAX */
    /* Sharding: the work items (configuration, repeat) of all cases of a sweep,
     * flattened in order, go round-robin to shard_count shards; this sweep
     * runs item g (g = shard_offset + the item's index within this case)
     * only when g % shard_count == shard_index. shard_count 0: every item. */
    int shard_index;            /* 0-based */
    int shard_count;
    long shard_offset;          /* items of the cases before this one */
    /* The axes a command sweeps (`sweep --axis`, `--batch`; sb_sweep_case
     * itself sweeps the thread counts): bits SB_AXIS_BIT(axis), 0 for every
     * axis the case has; and batch sizes in place of the case's (NULL: the
     * case's [invariance] batch). */
    unsigned axes;
    const int *batch;
    int n_batch;
    /* --isa and --env: variables whose values replace the case's (or add
     * an axis to it) */
    const sb_env_axis *env;
    int n_env;
    const int *resume;          /* resume steps in place of the case's [sweep] resume; NULL:
                                 * the case's */
    int n_resume;
} sb_sweep_options;

#define SB_AXIS_BIT(a) (1u << (unsigned)(a))

/* The configuration space of a case (harness/sweep/config.h): every point
 * on the axes the case and o ask for, each in its own child, in one loop.
 * A point of the batch axis ([invariance], FORMATS.md: a size B at one of
 * its batch thread counts T) is compared record by record with the
 * reference size's trace at T and located against it, judged against the
 * case's batch expectation; every other point against the golden. */
/* Fills r (r->runs allocated, free with sb_case_result_free); golden is
 * unread (a batch-only sweep) when no point is judged against it.
 * SB_ERR_INPUT when a child reports an input error: err names it and the
 * sweep stops; SB_ERR_USAGE or SB_ERR_NO_MPI for a space that cannot be
 * swept (sb_configs_make). */
sb_status sb_sweep_case(const sb_case *c, const sb_trace *golden,
                        const sb_sweep_options *o, sb_case_result *r,
                        char *err, size_t errlen);
void sb_case_result_free(sb_case_result *r);
/* The runs a sweep makes of thread count `threads`: the options' repeats,
 * else the case's repeats.<T>, else its repeats, else 1. */
int sb_sweep_repeats(const sb_case *c, const sb_sweep_options *o, int threads);

/* ---- the sweep driver (sweep/driver.c) ----------------------------------------
 * What every producer's sweep goes through (`samebits sweep`, a user's
 * program, command cases): a case's golden read and every axis swept, its
 * table, the census, the reports (sweep/driver.c). */

/* Puts c on the batch axis when o->batch says so, reads its golden (a
 * failure's message ends with `regenerate`, NULL: `samebits golden CASE`)
 * when a point needs it, and sweeps its configurations (sb_sweep_case),
 * into *r.
 * On an error (err filled; SB_ERR_NO_MPI for a rank case in a build without
 * MPI) nothing is left to free in *r. */
sb_status sb_sweep_axes(sb_case_result *r, sb_case *c, const sb_sweep_options *o,
                        const char *regenerate, char *err, size_t errlen);
/* The report files of a sweep; NULL: not written. */
typedef struct sb_sweep_reports {
    const char *json, *junit, *census_json, *census_md;
    bool tap;                   /* TAP on stdout (the tables then go to stderr) */
} sb_sweep_reports;

/* A sweep of several cases: what `samebits sweep` and a user's program do
 * alike. Open it with the options (the configuration space the cases are
 * swept over, and the runner's settings) and the reports; hand it each
 * case in turn (sb_sweep_driver_case), or the input error that kept a case
 * from it (sb_sweep_driver_refuse); close it for the reports and the exit
 * status. The cases must live until it is closed. */
typedef struct sb_sweep_driver {
    sb_sweep_options o;         /* shard_offset advances with each case swept */
    sb_sweep_reports reports;
    bool census_table;          /* print each case's census after its table */
    bool census;                /* build the censuses (census_table or a census file): every
                                 * origin located (unless o.max_origins says), from the run
                                 * traces, which o.keep_traces then keeps for it */
    bool keep_traces;           /* leave the run traces in the work directory after the census */
    sb_case_result *results;    /* [capacity]: results[0..n_results) */
    sb_census *censuses;        /* [capacity]: censuses[0..n_censuses) */
    int capacity, n_results, n_censuses;
    bool input_error;           /* a case was refused: exit SB_EXIT_INPUT */
    bool no_mpi;                /* a rank case in a build without MPI: SB_EXIT_NO_MPI */
    char error[1024];           /* the last input error, for the JUnit report */
} sb_sweep_driver;

/* d's o, reports, census_table, census and keep_traces set by the caller
 * first; room for `capacity` cases. SB_ERR_NOMEM. */
sb_status sb_sweep_driver_open(sb_sweep_driver *d, int capacity);
/* An input error that kept a case from the sweep (its file did not load):
 * kept for the JUnit report (the caller has printed it). */
void sb_sweep_driver_refuse(sb_sweep_driver *d, const char *message);
/* c swept (sb_sweep_axes with regenerate), its table printed (stderr with
 * TAP, else stdout) and its census built; false on an input error, printed
 * and kept. */
bool sb_sweep_driver_case(sb_sweep_driver *d, sb_case *c, const char *regenerate);
/* Writes the reports and frees d; the exit status: SB_EXIT_NO_MPI for a
 * rank case without MPI, else sb_sweep_exit's (an input error, a report or
 * census that could not be written included). */
int sb_sweep_driver_close(sb_sweep_driver *d);


/* The exit status of a sweep with these results: SB_EXIT_INPUT on an input
 * error, else SB_EXIT_CRASH when a run not as expected crashed or timed
 * out, else SB_EXIT_NONDETERMINISTIC when a run not as expected is
 * nondeterministic, else SB_EXIT_UNEXPECTED when any other run is not as expected (a
 * run not reached is no failure), else SB_EXIT_OK. */
int sb_sweep_exit(const sb_case_result *r, int n, bool input_error);

#endif
