/* The decode mutants' registry, from the SB_DECODE_MUTANT lines of
 * mutants.def. */
#include <string.h>

#include "decode_mutants.h"

typedef struct decode_mutant {
    const char *name;
    sb_attn_decode_fn *attend;
    sb_decode_fault fault_kind;
    const char *fault;
} decode_mutant;

static const decode_mutant decode_mutants[] = {
#define SB_MUTANT(name, kind, op, fault)
#define SB_RANK_MUTANT(name, fault_enum, fault)
#define SB_DECODE_MUTANT(name, attend, fault_enum, fault)                                   \
    {#name, attend, SB_DECODE_FAULT_##fault_enum, fault},
#define SB_RESUME_MUTANT(name, fault)
#include "mutants.def"
#undef SB_RESUME_MUTANT
#undef SB_DECODE_MUTANT
#undef SB_RANK_MUTANT
#undef SB_MUTANT
};

enum { N_DECODE_MUTANTS = sizeof decode_mutants / sizeof decode_mutants[0] };

static const decode_mutant *at(int i)
{
    SB_ASSERT(i >= 0 && i < N_DECODE_MUTANTS);
    return &decode_mutants[i];
}

int sb_decode_mutant_count(void)
{
    return N_DECODE_MUTANTS;
}

int sb_decode_mutant_find(const char *name)
{
    for (int i = 0; name && i < N_DECODE_MUTANTS; i++)
        if (strcmp(decode_mutants[i].name, name) == 0)
            return i;
    return -1;
}

const char *sb_decode_mutant_name(int i) { return at(i)->name; }
const char *sb_decode_mutant_fault(int i) { return at(i)->fault; }
sb_attn_decode_fn *sb_decode_mutant_attend(int i) { return at(i)->attend; }
sb_decode_fault sb_decode_mutant_fault_kind(int i) { return at(i)->fault_kind; }
