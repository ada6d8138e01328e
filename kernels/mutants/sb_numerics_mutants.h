/* Numerics variants of det kernels: each has one classic numerics fault that
 * a determinism sweep cannot see (its bits are the same at every thread
 * count); `samebits numerics` must flag them (harness/NUMERICS.md). */
#ifndef SB_NUMERICS_MUTANTS_H
#define SB_NUMERICS_MUTANTS_H

#include "sb_kernels.h"

typedef struct sb_numerics_mutant {
    const char *name;
    sb_op op;
    void (*install)(sb_kernel_table *t);   /* puts the variant in place of op's entry */
    const char *fault;          /* one line */
} sb_numerics_mutant;

const sb_numerics_mutant *sb_numerics_mutant_find(const char *name);   /* NULL if unknown */
const sb_numerics_mutant *sb_numerics_mutants(size_t *count);

#endif
