/* The mutant registry: names, kinds, faults, mutated ops, and one kernel
 * table per mutant (the det table with the mutant's op replaced), all from
 * mutants.def. */
#include <pthread.h>
#include <string.h>

#include "mutants.h"
#include "sb_model.h"

typedef struct mutant {
    const char *name;
    sb_mutant_kind kind;
    sb_op op;
    const char *fault;
} mutant;

static const mutant mutants[] = {
#define SB_MUTANT(name, kind, op, fault) {#name, SB_MUTANT_##kind, SB_OP_##op, fault},
#define SB_RANK_MUTANT(name, fault_enum, fault)
#define SB_DECODE_MUTANT(name, attend, fault_enum, fault)
#define SB_RESUME_MUTANT(name, fault)
#include "mutants.def"
#undef SB_RESUME_MUTANT
#undef SB_DECODE_MUTANT
#undef SB_RANK_MUTANT
#undef SB_MUTANT
};

enum { N_MUTANTS = sizeof mutants / sizeof mutants[0] };

static sb_kernel_table tables[N_MUTANTS];

static void build_tables(void)
{
    for (int i = 0; i < N_MUTANTS; i++) {
        tables[i] = *sb_kernels(SB_FAMILY_DET);
        sb_mutant_install(i, &tables[i]);
    }
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

static const mutant *mutant_at(int i)
{
    SB_ASSERT(i >= 0 && i < N_MUTANTS);
    return &mutants[i];
}

const char *sb_mutant_name(int i) { return mutant_at(i)->name; }
sb_mutant_kind sb_mutant_kind_of(int i) { return mutant_at(i)->kind; }
sb_op sb_mutant_op(int i) { return mutant_at(i)->op; }
const char *sb_mutant_fault(int i) { return mutant_at(i)->fault; }

void sb_mutant_install(int i, sb_kernel_table *t)
{
    SB_ASSERT(i >= 0 && i < N_MUTANTS);
    int at = 0;
#define SB_MUTANT(name, kind, op, fault)                                                  \
    if (i == at++) {                                                                      \
        t->op = sb_mutant_##name;                                                         \
        return;                                                                           \
    }
#define SB_RANK_MUTANT(name, fault_enum, fault)
#define SB_DECODE_MUTANT(name, attend, fault_enum, fault)
#define SB_RESUME_MUTANT(name, fault)
#include "mutants.def"
#undef SB_RESUME_MUTANT
#undef SB_DECODE_MUTANT
#undef SB_RANK_MUTANT
#undef SB_MUTANT
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

/* ---- rank mutants: faults of the data-parallel step, not of a kernel ---- */

typedef struct rank_mutant {
    const char *name;
    sb_rank_fault fault_kind;
    const char *fault;
} rank_mutant;

static const rank_mutant rank_mutants[] = {
#define SB_MUTANT(name, kind, op, fault)
#define SB_RANK_MUTANT(name, fault_enum, fault) {#name, SB_RANK_FAULT_##fault_enum, fault},
#define SB_DECODE_MUTANT(name, attend, fault_enum, fault)
#define SB_RESUME_MUTANT(name, fault)
#include "mutants.def"
#undef SB_RESUME_MUTANT
#undef SB_DECODE_MUTANT
#undef SB_RANK_MUTANT
#undef SB_MUTANT
};

enum { N_RANK_MUTANTS = sizeof rank_mutants / sizeof rank_mutants[0] };
_Static_assert(N_RANK_MUTANTS + 1 == SB_RANK_FAULT_COUNT,
               "one SB_RANK_MUTANT line per sb_rank_fault");

int sb_rank_mutant_find(const char *name)
{
    for (int i = 0; name && i < N_RANK_MUTANTS; i++)
        if (strcmp(rank_mutants[i].name, name) == 0)
            return i;
    return -1;
}

sb_rank_fault sb_rank_mutant_fault_kind(int i)
{
    SB_ASSERT(i >= 0 && i < N_RANK_MUTANTS);
    return rank_mutants[i].fault_kind;
}

const char *sb_rank_mutant_fault(int i)
{
    SB_ASSERT(i >= 0 && i < N_RANK_MUTANTS);
    return rank_mutants[i].fault;
}

/* ---- resume mutants: faults of restoring a checkpoint, not of a kernel ---- */

typedef struct resume_mutant {
    const char *name;
    sb_resume_fault_fn *restore;
    const char *fault;
} resume_mutant;

static const resume_mutant resume_mutants[] = {
#define SB_MUTANT(name, kind, op, fault)
#define SB_RANK_MUTANT(name, fault_enum, fault)
#define SB_DECODE_MUTANT(name, attend, fault_enum, fault)
#define SB_RESUME_MUTANT(name, fault) {#name, sb_resume_mutant_##name, fault},
#include "mutants.def"
#undef SB_RESUME_MUTANT
#undef SB_DECODE_MUTANT
#undef SB_RANK_MUTANT
#undef SB_MUTANT
};

enum { N_RESUME_MUTANTS = sizeof resume_mutants / sizeof resume_mutants[0] };

int sb_resume_mutant_count(void)
{
    return N_RESUME_MUTANTS;
}

int sb_resume_mutant_find(const char *name)
{
    for (int i = 0; name && i < N_RESUME_MUTANTS; i++)
        if (strcmp(resume_mutants[i].name, name) == 0)
            return i;
    return -1;
}

const char *sb_resume_mutant_name(int i)
{
    SB_ASSERT(i >= 0 && i < N_RESUME_MUTANTS);
    return resume_mutants[i].name;
}

sb_resume_fault_fn *sb_resume_mutant_restore(int i)
{
    SB_ASSERT(i >= 0 && i < N_RESUME_MUTANTS);
    return resume_mutants[i].restore;
}

const char *sb_resume_mutant_fault(int i)
{
    SB_ASSERT(i >= 0 && i < N_RESUME_MUTANTS);
    return resume_mutants[i].fault;
}
