/* libsamebits' user API: what a program that puts its own kernels or
 * training loop under the harness calls and reads.
 *
 *   hashing          sb_hash_tensor and friends: a tensor's XXH3-128 tree hash
 *   traces           sb_trace and its records, read back from a trace or golden
 *   verdicts         sb_verdict, sb_verdict_set and their names
 *   exit codes       SB_EXIT_*: what sb_user_main and the `samebits` command return
 *   user programs    sb_user_kernel, sb_user_main, sb_user_main_kernels
 *
 * The headers it includes hold the probe types (sb_probe.h), the probe
 * helpers of the kernel list's ops (sb_probe_ops.h, reference in
 * harness/examples/API.md), the kernels' bounds and shapes (sb_kernels.h)
 * and the RNG that makes inputs (sb_rng.h, through sb_common.h).
 *
 * The library's own stages (case files, runs, comparison, location, sweeps,
 * reports) are declared in harness/sb_harness.h, which is not installed:
 * docs/ARCHITECTURE.md draws them. Formats are in harness/FORMATS.md,
 * REPORTS.md and NUMERICS.md, the command in harness/CLI.md.
 */
#ifndef SAMEBITS_H
#define SAMEBITS_H

#include <stdbool.h>
#include <stdio.h>

#include "sb_common.h"
#include "sb_kernels.h"
#include "sb_model.h"
#include "sb_probe.h"
#include "sb_probe_ops.h"

#define SB_TRACE_FORMAT_VERSION 1
/* The first word of a trace stream's magic line (harness/FORMATS.md). */
#define SB_TRACE_STREAM_MAGIC "samebits-stream"
/* An input, in a record's input list, that no traced op made (a constant, a
 * tensor made outside the trace): nothing vouches for its bits. Never a
 * record's own name (harness/FORMATS.md). */
#define SB_TRACE_UNTRACED "?"

/* ---- hashing ----------------------------------------------------------------
 * XXH3-128 over a canonical header (dtype, ndim, dims as little-endian
 * uint64) followed by the raw bytes, computed as a tree: the bytes are cut
 * into SB_HASH_LEAF_BYTES leaves (sb_probe.h), each leaf hashed alone, and the
 * root is the hash of the header and the leaf hashes in order. Leaves may be
 * hashed in parallel, or by a kernel while they are hot; the result does not
 * depend on the thread count or on who hashed the leaves. */
typedef struct sb_hash {
    unsigned char bytes[16];    /* canonical (big-endian) XXH3-128 */
} sb_hash;

sb_hash sb_hash_tensor(const sb_tensor *t);
/* The leaf hash of the tree (canonical XXH3-128 of the leaf's bytes): what a
 * kernel's hashed mode is handed so that its digests are this tree's leaves. */
sb_leaf_hash_fn sb_hash_leaf;
/* The root from the tensor's header and its leaf digests (as many as it has
 * leaves, in order, made by sb_hash_leaf): sb_hash_tensor without reading the
 * bytes. */
sb_hash sb_hash_tensor_leaves(const sb_tensor *t, const sb_leaf_digest *leaves);
void sb_hash_hex(const sb_hash *h, char out[33]);
bool sb_hash_parse(sb_hash *h, const char *hex);    /* 32 hex digits */
bool sb_hash_equal(const sb_hash *a, const sb_hash *b);

/* ---- traces -------------------------------------------------------------- */

/* A record's strings and its array of inputs are one allocation, at name:
 * sb_trace_free frees it; op and inputs point into it. */
typedef struct sb_record {
    int64_t step;
    char *name;
    char *op;
    sb_dtype dtype;
    int ndim;
    int64_t dim[SB_MAX_DIMS];
    sb_hash hash;
    int n_inputs;
    char **inputs;
} sb_record;

typedef struct sb_trace_header {
    int version;                /* SB_TRACE_FORMAT_VERSION */
    char case_name[128];
    char case_digest[33];       /* hex of sb_case.digest */
    char samebits_version[32];
    char family[16];            /* of the reference configuration */
    int threads;                /* of the reference configuration */
    char build[160];            /* compiler, flags */
} sb_trace_header;

typedef struct sb_trace {
    sb_trace_header header;
    sb_record *records;
    size_t n_records, cap_records;
    sb_epoch_metrics *metrics;  /* training runs: one per epoch */
    int n_metrics, cap_metrics;
} sb_trace;

void sb_trace_init(sb_trace *t);
void sb_trace_free(sb_trace *t);
/* err gets "path:line: what was expected" on SB_ERR_INPUT. t need not be
 * initialised; on any error it is left empty (sb_trace_init), nothing leaks. */
sb_status sb_trace_read(sb_trace *t, const char *path, char *err, size_t errlen);

/* ---- verdicts ------------------------------------------------------------ */

typedef enum sb_verdict {
    SB_VERDICT_IDENTICAL,
    SB_VERDICT_REORDERING,
    SB_VERDICT_UNBOUNDED,           /* differs in an op with no known bound */
    SB_VERDICT_BEYOND_BOUND,
    SB_VERDICT_CRASH,
    SB_VERDICT_TIMEOUT,
    SB_VERDICT_NONDETERMINISTIC,    /* the configuration does not repeat itself */
    SB_VERDICT_COUNT
} sb_verdict;

const char *sb_verdict_name(sb_verdict v);          /* "identical", "beyond-bound", ... */
sb_verdict sb_verdict_from_name(const char *name);  /* SB_VERDICT_COUNT if unknown */
/* How bad a verdict of a divergence is, for the worst of several: identical
 * 0 < reordering 1 < unbounded 2 < beyond-bound 3 < nondeterministic 4;
 * crash and timeout (no divergence) 5. Unbounded sits above reordering (a
 * difference nothing vouches for must not hide behind one that is) and
 * below beyond-bound (a bound known and exceeded is a bug; an unknown one
 * may still be a reordering). */
int sb_verdict_rank(sb_verdict v);

/* A set of verdicts, one bit per sb_verdict (SB_VERDICT_BIT): what a case
 * accepts at a thread count, e.g. `expect = identical|reordering`. */
typedef unsigned sb_verdict_set;
#define SB_VERDICT_BIT(v) (1u << (unsigned)(v))
/* "identical|reordering": the members in sb_verdict order, joined by '|'. */
void sb_verdict_set_name(sb_verdict_set s, char *out, size_t len);
/* The set a "identical|reordering" names; 0 when a member is unknown or empty. */
sb_verdict_set sb_verdict_set_from_name(const char *name);
/* The first member in sb_verdict order (s nonzero). */
sb_verdict sb_verdict_set_first(sb_verdict_set s);

#define SB_MAX_THREADS 64         /* thread counts a sweep runs, 1..this */

/* Exit codes of the `samebits` command and of sb_user_main. */
enum {
    SB_EXIT_OK = 0,             /* every configuration as expected */
    SB_EXIT_UNEXPECTED = 1,     /* a divergence or verdict the case did not expect */
    SB_EXIT_INPUT = 2,          /* usage or input error: bad case, missing golden or data */
    SB_EXIT_CRASH = 3,          /* a configuration crashed or timed out */
    SB_EXIT_NONDETERMINISTIC = 4, /* a configuration did not repeat itself, unexpectedly */
    SB_EXIT_NO_MPI = 5,         /* a rank sweep asked of a build without MPI (-Dmpi=enabled) */
    SB_EXIT_SHARD_ENV = 6,      /* --shard auto: a scheduler's shard variable half set or out of range */
};

/* ---- a user's own kernels under the harness ----------------------------------
 * A program that links libsamebits describes its kernels and hands its
 * command line to sb_user_main_kernels (sb_user_main: one kernel):
 *
 *     static sb_status my_run(void *ctx, sb_probe_fn *probe, void *probe_ctx)
 *     {   ... compute, then for every tensor worth watching:
 *         sb_probe_point p = {.name = "dot.out", .op = "dot", .tensor = &y,
 *                             .inputs = names, .n_inputs = 2,
 *                             .input_tensors = xs, .n_input_tensors = 2,
 *                             .bound = my_bound, .bound_ctx = ctx};
 *         probe(probe_ctx, &p);
 *         return SB_OK; }
 *     int main(int argc, char **argv)
 *     {   sb_user_kernel k[] = {{.name = "dot", .version = "1", .run = my_run,
 *                                .expect = SB_VERDICT_REORDERING}, ...};
 *         return sb_user_main_kernels(argc, argv, k, sizeof k / sizeof k[0]); }
 *
 * (an op of the kernel list is probed in one call, sb_probe_<op>:
 * sb_probe_ops.h, harness/examples/API.md)
 * and gets the subcommands (see harness/examples/README.md):
 *   list
 *   run NAME --threads N --trace FILE [--dump PROBE --dump-step S --dump-dir DIR]
 *       [--dump-list FILE --dump-dir DIR] [--stop-at K --checkpoint FILE | --resume FILE]
 *   golden [NAME...] [--golden FILE | --golden-dir DIR]
 *   sweep [NAME...] [--threads LIST] [--repeat R] [--timeout S] [--resume LIST]
 *         [--golden FILE | --golden-dir DIR] [--work-dir DIR] [--json FILE]
 *         [--junit FILE] [--tap] [--census] [--census-json FILE] [--census-md FILE]
 * Each kernel is a case of its own (its name, golden, probes, expectation);
 * golden and sweep work on the kernels named, default all. The golden is the
 * run at 1 thread (default file NAME.golden); sweep runs every thread count
 * in a child of this same program and expects `expect` (or a member of
 * `expect_set`) at every count but 1. Returns an SB_EXIT_* code. */
typedef sb_status sb_user_run_fn(void *ctx, sb_probe_fn *probe, void *probe_ctx);

/* The resume hook of a kernel whose run is a loop of steps (optional:
 * harness/examples/README.md, "Resuming"). `run NAME ... --stop-at K
 * --checkpoint FILE` runs steps 0..K-1 and then save writes the kernel's
 * state (everything the next step reads: parameters, optimiser state,
 * RNG counters, the data order's position) to f; `run NAME ... --resume
 * FILE`, in a new process, has restore read it back into ctx before run
 * runs steps K on; `sweep --resume LIST` runs every step K of LIST so and
 * compares the run's probes from step K on with the golden. Each returns
 * SB_OK, or another status when it fails (restore: SB_ERR_INPUT for data
 * that does not read back). */
typedef sb_status sb_user_save_fn(void *ctx, FILE *f);
typedef sb_status sb_user_restore_fn(void *ctx, FILE *f);

/* The steps this process's run function runs, [first, end): [0, steps) for
 * a whole run, [0, K) for one that stops at K, [K, steps) for one resumed
 * at K (ctx then holds what restore read: start from it, not from the
 * initial state). probe_ctx is the one the run function was handed. Only
 * for a kernel with the resume hook: the library knows no other kernel's
 * steps, so for one that declares no .steps it returns [0, 0) and fails
 * the run (exit 2, one line: declare .steps, .save and .restore, or loop
 * over all the steps without asking). */
typedef struct sb_user_steps {
    int64_t first, end;
} sb_user_steps;
sb_user_steps sb_user_run_steps(void *probe_ctx);

typedef struct sb_user_kernel {
    const char *name;           /* names the case, its golden and its report lines; no '/' */
    const char *version;        /* part of the golden's digest: change it when inputs or probes change */
    sb_user_run_fn *run;        /* computes and probes; called once per process */
    void *ctx;
    sb_verdict expect;          /* above 1 thread: identical for a det kernel, reordering for a reduction */
    bool external_inputs;       /* its probes name inputs it never probes: a warning, not
                                 * an input error (sb_trace_check_graph) */
    sb_verdict_set expect_set;  /* nonzero: the verdicts accepted above 1 thread, in place of
                                 * expect, e.g. SB_VERDICT_BIT(SB_VERDICT_IDENTICAL) |
                                 * SB_VERDICT_BIT(SB_VERDICT_REORDERING) for a library whose
                                 * bits may or may not follow the thread count */
    /* the resume hook: all three, or none (the kernel is refused a resume) */
    int64_t steps;              /* the steps of its run, 0..steps-1 */
    sb_user_save_fn *save;
    sb_user_restore_fn *restore;
} sb_user_kernel;

/* kernels[0..n): n >= 1, names distinct, none empty, starting with '-' or
 * holding '/'. */
int sb_user_main_kernels(int argc, char **argv, const sb_user_kernel *kernels, size_t n);
int sb_user_main(int argc, char **argv, const sb_user_kernel *k);   /* n = 1 */
#include "sb_user_build.h"

#endif
