/* The mutant registry: names, faults, mutated ops, and one kernel table per
 * mutant (the det table with the mutant's op replaced), all from mutants.def. */
#include <pthread.h>
#include <string.h>

#include "mutants.h"

typedef struct mutant {
    const char *name;
    sb_op op;
    const char *fault;
} mutant;

static const mutant mutants[] = {
#define SB_MUTANT(name, op, fault) {#name, SB_OP_##op, fault},
#include "mutants.def"
#undef SB_MUTANT
};

enum { N_MUTANTS = sizeof mutants / sizeof mutants[0] };

static sb_kernel_table tables[N_MUTANTS];

static void build_tables(void)
{
    int i = 0;
#define SB_MUTANT(name, op, fault)                                                        \
    tables[i] = *sb_kernels(SB_FAMILY_DET);                                               \
    tables[i++].op = sb_mutant_##name;
#include "mutants.def"
#undef SB_MUTANT
    SB_ASSERT(i == N_MUTANTS);
}

int sb_mutant_count(void)
{
    return N_MUTANTS;
}

int sb_mutant_find(const char *name)
{
    for (int i = 0; name && i < N_MUTANTS; i++)
        if (strcmp(mutants[i].name, name) == 0)
            return i;
    return -1;
}

const char *sb_mutant_name(int i)
{
    SB_ASSERT(i >= 0 && i < N_MUTANTS);
    return mutants[i].name;
}

sb_op sb_mutant_op(int i)
{
    SB_ASSERT(i >= 0 && i < N_MUTANTS);
    return mutants[i].op;
}

const char *sb_mutant_fault(int i)
{
    SB_ASSERT(i >= 0 && i < N_MUTANTS);
    return mutants[i].fault;
}

const sb_kernel_table *sb_kernels_mutant(const char *name)
{
    int i = sb_mutant_find(name);
    if (i < 0)
        return NULL;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, build_tables);
    return &tables[i];
}
