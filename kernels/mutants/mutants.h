/* The mutant kernels (internal to kernels/mutants/): one declaration per line
 * of mutants.def, with the type of the op it replaces. */
#ifndef SB_MUTANTS_H
#define SB_MUTANTS_H

#include "op_kernels.h"
#include "sb_model.h"

#define SB_MUTANT(name, kind, op, fault) sb_##op##_fn sb_mutant_##name;
#define SB_RANK_MUTANT(name, fault_enum, fault)
#define SB_DECODE_MUTANT(name, attend, fault_enum, fault)
#define SB_RESUME_MUTANT(name, fault) sb_resume_fault_fn sb_resume_mutant_##name;
#include "mutants.def"
#undef SB_RESUME_MUTANT
#undef SB_DECODE_MUTANT
#undef SB_RANK_MUTANT
#undef SB_MUTANT

#endif
