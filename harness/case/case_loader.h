/* Internal to libsamebits: reading a case file (the files of case/). case_read.c
 * collects every (section, key, value) entry with its line first; each
 * section's file then interprets its entries (case_section.c, case_kernel.c,
 * case_train.c, case_sweep.c, case_invariance.c, case_parallel.c,
 * case_expect.c, case_command.c) with the value parsers of case_values.c
 * and the parameter tables of case_params.c; case_digest.c digests what
 * was read. The syntax is in FORMATS.md. */
#ifndef SB_CASE_LOADER_H
#define SB_CASE_LOADER_H

#include <stdio.h>

#include "sb_harness.h"

typedef struct case_entry {
    char section[16];
    char key[32];
    char value[256];
    int line;
} case_entry;

typedef struct section_mark {
    char name[32];
    int line;
} section_mark;

#define MAX_ENTRIES 128
#define MAX_SECTIONS 16

typedef struct case_loader {
    FILE *f;
    const char *path;
    int line;                   /* of the line inih is working on */
    int max_line;               /* inih's line buffer, bytes */
    bool line_too_long;
    bool nul_byte;              /* on line `line` */
    case_entry entries[MAX_ENTRIES];
    int n_entries;
    section_mark sections[MAX_SECTIONS];
    int n_sections;
    bool too_many;
    char *err;
    size_t errlen;
    sb_status status;           /* first error; err holds its message */
} case_loader;

/* ---- entries and values (case_values.c) ---------------------------------------- */

/* "path:line: expected <fmt>" into ld->err; the first error wins: later
 * ones keep its message and return its status. */
__attribute__((format(printf, 3, 4)))
sb_status sb_case_fail(case_loader *ld, int line, const char *fmt, ...);
const case_entry *sb_case_find(const case_loader *ld, const char *section, const char *key);
/* The line of [section], 0 when the file has none. */
int sb_case_section_line(const case_loader *ld, const char *section);
bool sb_case_in_list(const char *const *list, const char *key);
/* Fails at the first key of [section] that is neither in keys nor a
 * per-count key "<prefix>.<N>" of prefixes; `names` lists them all for the
 * message. */
sb_status sb_case_keys_check(case_loader *ld, const char *section, const char *const *keys,
                             const char *const *prefixes, const char *names);
/* Fails when two per-count keys "<prefix>.<N>" of [section] name one count
 * (expect.2 beside expect.02, repeats.2 beside repeats.+2). */
sb_status sb_case_per_count_once(case_loader *ld, const char *section, const char *prefix);
/* {"expect", NULL}: the per-count keys of [invariance] and [parallel] */
extern const char *const sb_case_expect_per_count[];

sb_status sb_case_get_i64(case_loader *ld, const case_entry *e, int64_t lo, int64_t hi,
                          int64_t *out);
sb_status sb_case_get_u64(case_loader *ld, const case_entry *e, uint64_t *out);
sb_status sb_case_get_real(case_loader *ld, const case_entry *e, double lo, double hi,
                           bool hi_open, float *out);
sb_status sb_case_get_bool(case_loader *ld, const case_entry *e, bool *out);
/* "a..b": half-open, 0 <= a < b. */
sb_status sb_case_get_range(case_loader *ld, const case_entry *e, int64_t *begin,
                            int64_t *end);
/* One verdict or a set of them joined by '|': "identical|reordering". */
sb_status sb_case_get_verdicts(case_loader *ld, const case_entry *e, sb_verdict_set *s);

/* ---- parameter tables (case_params.c) ------------------------------------------ */

typedef enum ptype { P_INT, P_I64, P_SIZE, P_REAL, P_BOOL } ptype;

typedef struct case_param {
    const char *key;
    ptype type;
    size_t offset;      /* into the struct the table is for */
    double lo, hi;
    bool hi_open;
    bool required;
} case_param;

/* An optimiser hyper-parameter, an offset into sb_optim_params; `uses` says
 * which optimisers read it (a bit per sb_optimizer, SB_CASE_USES). */
typedef struct case_optim_param {
    case_param p;
    unsigned uses;
} case_optim_param;
#define SB_CASE_USES(o) (1u << (o))
extern const case_optim_param sb_case_optim_params[];
extern const size_t sb_case_n_optim_params;

/* The [kernel] keys of an op's params group (kernels.def), in the order the
 * digest lists them; a list ends at a NULL key. */
const case_param *sb_case_op_params(sb_op op);
/* The optimiser an update op implements, or SB_OPTIM_COUNT. */
sb_optimizer sb_case_op_optimizer(sb_op op);
/* The [train] keys of model m besides model, dataset, train, test and
 * optimizer, in the order the digest lists them. */
const case_param *sb_case_train_params(const sb_model_kind *m);
const case_param *sb_case_find_param(const case_param *list, const char *key);
const case_param *sb_case_find_optim_param(sb_optimizer kind, const char *key);
/* Parses e's value as p says into base + p->offset. */
sb_status sb_case_set_param(case_loader *ld, void *base, const case_param *p,
                            const case_entry *e);
/* "n c h w" plus the optimiser's keys, for messages. */
void sb_case_describe_keys(char *out, size_t size, const case_param *list, sb_optimizer kind);

/* ---- the sections, in the order case_read.c loads them ------------------------- */

sb_status sb_case_load_case(case_loader *ld, sb_case *c);
sb_status sb_case_load_kernel(case_loader *ld, sb_case *c);
sb_status sb_case_load_train(case_loader *ld, sb_case *c);
sb_status sb_case_load_command(case_loader *ld, sb_case *c);
sb_status sb_case_load_sweep(case_loader *ld, sb_case *c);
sb_status sb_case_load_expect(case_loader *ld, sb_case *c);
sb_status sb_case_load_invariance(case_loader *ld, sb_case *c);
sb_status sb_case_load_parallel(case_loader *ld, sb_case *c);

/* c->digest from everything that decides the trace's records (case_digest.c). */
void sb_case_digest_set(sb_case *c);

#endif
